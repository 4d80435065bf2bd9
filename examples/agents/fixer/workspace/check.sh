#!/bin/sh
# Checks settings.conf: prints one FAIL line per problem and exits 1, or prints OK and exits 0.
conf=settings.conf
if [ ! -f "$conf" ]; then
  echo "FAIL: $conf is missing"
  exit 1
fi

# The last value assigned to key $1, without surrounding blanks.
value() {
  sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*//p" "$conf" | tail -n 1 | sed 's/[[:space:]]*$//'
}

status=0
retries=$(value retries)
case "$retries" in
  '' | *[!0-9]*)
    echo "FAIL: retries must be an integer between 0 and 10, got '$retries'"
    status=1
    ;;
  *)
    if [ "$retries" -gt 10 ]; then
      echo "FAIL: retries must be an integer between 0 and 10, got '$retries'"
      status=1
    fi
    ;;
esac

timeout=$(value timeout_seconds)
case "$timeout" in
  '' | *[!0-9]* | 0)
    echo "FAIL: timeout_seconds must be a positive integer, got '$timeout'"
    status=1
    ;;
esac

if [ -z "$(value output_dir)" ]; then
  echo "FAIL: output_dir must be set"
  status=1
fi

if [ "$status" -eq 0 ]; then
  echo "OK: settings.conf passes all checks"
fi
exit "$status"
