from tests.bench.run import main

main()
