#!/usr/bin/env bash
# bench/sequencer.sh - sequencer events/s (goal >= 5 M/s per core) with and
# without filters, and recording size per million events.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/build/bench/sequencer_bench" "${SEQ_MEVENTS:-5}"
