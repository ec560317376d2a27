#!/usr/bin/env bash
# Fails when SQL could be built from strings. Every query in the services goes
# through PostgresNIO's PostgresQuery string interpolation, where `\(value)`
# becomes a bind parameter ($1, $2, …), never text in the statement. The only
# ways around that are PostgresQuery(unsafeSQL:), the `\(unescaped:)`
# interpolation and simpleQuery(String); they are allowed in one place only:
# the migration runner, whose statements are StaticString constants.
#
#   deploy/check-sql.sh        (run by deploy/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

allowed=Shared/GeoChatPostgres/Migrations.swift
failed=0
report() { echo "check-sql: $1"; failed=1; }

hits=$(grep -rnE 'unsafeSQL|unescaped:|simpleQuery\(' Services Shared --include='*.swift' | grep -v "^$allowed:" || true)
[ -z "$hits" ] || report "raw SQL outside the migration runner:
$hits"

# The migration statements must stay compile-time constants.
grep -q 'public let statements: \[StaticString\]' "$allowed" || report "Migration.statements is no longer [StaticString]"
grep -q 'schema: StaticString' "$allowed" || report "the migration schema name is no longer a StaticString"

# A query built by concatenation: `query("…" + x)` or `let sql = "SELECT…" + …`.
hits=$(grep -rnE '\.query\([^)]*"[[:space:]]*\+|\+[[:space:]]*"[[:space:]]*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|ALTER)' \
  Services Shared --include='*.swift' || true)
[ -z "$hits" ] || report "SQL built by string concatenation:
$hits"

# Nothing turns a String into a PostgresQuery except the literal syntax.
hits=$(grep -rnE 'PostgresQuery\(stringLiteral|PostgresQuery\(stringInterpolation|ExpressibleByStringLiteral.*PostgresQuery|extension PostgresQuery' \
  Services Shared --include='*.swift' || true)
[ -z "$hits" ] || report "a way to make a PostgresQuery from a runtime String:
$hits"

if [ "$failed" = 0 ]; then
  echo "check-sql: ok ($(grep -rn 'client.query\|tx.query\|connection.query' Services Shared --include='*.swift' | wc -l) query call sites, all parameterized)"
fi
exit "$failed"
