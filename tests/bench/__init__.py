"""The benchmark of record: `make bench`, or `python -m tests.bench --help`.

Click→agent latency and bursts through Slack (HTTP mode and Socket Mode, SQLite and
PostgreSQL), each measured side by side with a bare slack-bolt app (the floor) in the same
run; then create throughput, memory per waiting request, start-up time with many waiting, and
the memory of many concurrent long-polls. Every server is a child process of its own: the
Slack emulator (`tests.bench.slack_process`), `askbridge serve` and the floor
(`tests.bench.floor`); this process plays the agents and tells the emulator whom to click.
"""
