"""Shared Python support of the integration tests (Tests/Integration), the
fault harness (Tests/Reliability) and the benchmarks (deploy/bench*):

- `stack`: the running stack as deploy/stack.sh describes it (stack.env, instance files, stack.sh commands);
- `db`: statements through psql;
- `protocol`: the legacy (phone) protocol over HTTP: requests, answers, XML parsing;
- `stats`: the one percentile definition behind every p50/p99 the project reports;
- `waiting`: waiting on a condition with a deadline.

Entry points put Tests/Support on sys.path (conftest.py, the scripts)."""
