#!/bin/sh
# stage.sh "WHAT" COMMAND [ARGS...]: say what the next stage of `make` does, run it, then say how
# long it took (or that it failed, with its exit status). Used by the Makefile's set-up steps.
what=$1
shift
printf '==> %s\n' "$what"
start=$(date +%s)
if "$@"; then
	printf '    done in %ss\n' "$(($(date +%s) - start))"
else
	status=$?
	printf '==> failed after %ss (exit %s): %s\n' "$(($(date +%s) - start))" "$status" "$what"
	exit "$status"
fi
