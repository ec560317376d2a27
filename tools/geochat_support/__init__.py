"""Shared Python support of the integration tests (Tests/Integration), the
fault harness (Tests/Reliability) and the benchmarks (geochat_bench):

- `stack`: the running stack as deploy/stack.sh describes it (stack.env, instance files, stack.sh commands);
- `db`: statements through psql;
- `protocol`: the legacy (phone) protocol over HTTP: requests, answers, XML parsing;
- `stats`: the one percentile definition behind every p50/p99 the project reports;
- `waiting`: waiting on a condition with a deadline.

Installed into the project's .venv with tools/ (`pip install -e tools`, which
deploy/install.sh runs), so every entry point imports it as it is."""
