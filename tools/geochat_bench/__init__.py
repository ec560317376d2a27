"""GeoChat's benchmarks, run by the deploy/*.sh entry points against a stack they start
(`python -m geochat_bench.MODULE`), one module per scenario or run:

- `suite`: deploy/bench.sh's scenarios in order, its report and target verdicts, over
  `idle_polls`, `cost`, `chats`, `say`, `memory` and `fanout` (one module each);
- `writes`: deploy/bench-writes.sh (the write path beside the PHP server);
- `push`: deploy/bench-push.sh (JSON API nearby search, push latency, many subscribers);
- `variants`: deploy/bench-variants.sh (the say rounds per settings variant);
- `soak`: deploy/soak.sh (a long run on a stack never restarted);
- `expiry`: deploy/bench-expiry.sh (an expiry run over many idle rooms, polls meanwhile);
- `idle_cpu`: deploy/idle.sh (the idle stack's CPU per process).

What they share: `runner` (wrk with `paths.lua`, set-up helpers, broker restarts, machine
facts) and `doc_sections`, the one writer of the generated sections of docs/benchmarks.md
and docs/capacity.md. The hello-world reference some of them measure beside the gateway
is the Swift package Tests/Benchmarks/HelloWorld, built only by deploy/bench.sh and
bench-push.sh (deploy/lib.sh's hello_build).

Installed editable into .venv with geochat_support (tools/pyproject.toml): the docs are
found beside the package, in the project folder (runner.ROOT)."""
