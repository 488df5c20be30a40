#!/usr/bin/env bash
# Prints the path of a Chromium for the browser tests, installing Debian's `chromium` package first when
# there is none (as CI does on a clean machine, as root). CHROMIUM_PATH names another browser binary.
# Progress goes to stderr; stdout is the path alone.
set -euo pipefail

if [ -n "${CHROMIUM_PATH:-}" ]; then
  if [ -x "$CHROMIUM_PATH" ]; then echo "$CHROMIUM_PATH"; exit 0; fi
  echo "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable file" >&2
  exit 1
fi

for candidate in /usr/bin/chromium /usr/bin/chromium-browser; do
  if [ -x "$candidate" ]; then echo "$candidate"; exit 0; fi
done

if ! command -v apt-get >/dev/null 2>&1; then
  echo "No Chromium found, and no apt-get to install one: install Chromium (or Chrome) and set CHROMIUM_PATH to its binary" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "No Chromium found, and installing one needs root: run 'sudo apt-get install -y --no-install-recommends chromium', or set CHROMIUM_PATH" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "Installing Debian's chromium for the browser tests..." >&2
# A fresh machine may have no package lists yet: update only when the first attempt fails.
if ! apt-get install -y --no-install-recommends chromium >&2; then
  apt-get update >&2 && apt-get install -y --no-install-recommends chromium >&2 || {
    echo "apt-get could not install chromium; install it by hand or set CHROMIUM_PATH" >&2
    exit 1
  }
fi
if [ -x /usr/bin/chromium ]; then echo /usr/bin/chromium; exit 0; fi
echo "the chromium package installed, but /usr/bin/chromium is missing; set CHROMIUM_PATH" >&2
exit 1
