#!/bin/sh
# `make run`: starts sf2loki in the foreground with a development setup.
#
# With CONFIG=/path/to/config.yaml (a real org), that file is used as it is.
# Without it, the generated config.example.yaml runs against local endpoints: a throwaway
# RSA key, loopback Loki URL, and state under build/dev. Ctrl-C (SIGINT) or SIGTERM stops it.
set -eu
BIN=${1:?usage: run-dev.sh path/to/sf2loki}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

if [ -n "${CONFIG:-}" ]; then
	exec "$BIN" run --config "$CONFIG"
fi

DEV="$ROOT/build/dev"
mkdir -p "$DEV"
chmod 0700 "$DEV"
if [ ! -s "$DEV/private-key.pem" ]; then
	umask 077
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$DEV/private-key.pem" 2>/dev/null
fi

export SF_CLIENT_ID="${SF_CLIENT_ID:-dev-consumer-key}"
export SF_USERNAME="${SF_USERNAME:-integration@example.com}"
export SF_PRIVATE_KEY_FILE="${SF_PRIVATE_KEY_FILE:-$DEV/private-key.pem}"
export LOKI_URL="${LOKI_URL:-http://127.0.0.1:3100/loki/api/v1/push}"
export SF2LOKI_STATE__FILE__PATH="${SF2LOKI_STATE__FILE__PATH:-$DEV/state.json}"
export SF2LOKI_COORDINATE__FILE_LEASE__PATH="${SF2LOKI_COORDINATE__FILE_LEASE__PATH:-$DEV/leader.lease}"
export SF2LOKI_SERVICE__HEALTH_ADDR="${SF2LOKI_SERVICE__HEALTH_ADDR:-127.0.0.1:8080}"
export SF2LOKI_SERVICE__LOG_FORMAT="${SF2LOKI_SERVICE__LOG_FORMAT:-logfmt}"

echo "run-dev: sf2loki with config.example.yaml (state in $DEV); Ctrl-C stops it" >&2
exec "$BIN" run --config "$ROOT/config.example.yaml"
