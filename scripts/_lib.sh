# Shared by scripts/run and scripts/test: a Python 3.11 virtual environment in .venv with the
# pinned requirements, reinstalled only when a requirements file changes.

pick_python() {
  for candidate in "${PYTHON:-}" python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "Python 3.11 is required: install it, or set PYTHON=/path/to/python3.11" >&2
  return 1
}

ensure_venv() {
  local requirements="$1"
  if [ ! -x .venv/bin/python ]; then
    local python
    python=$(pick_python)
    echo "Creating .venv with $python"
    "$python" -m venv .venv
    .venv/bin/python -m pip install --quiet --upgrade pip
  fi
  local stamp=".venv/.installed-$(basename "$requirements")"
  local digest
  digest=$(cat "$requirements" requirements.txt | sha256sum | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
    echo "Installing $requirements into .venv"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$requirements"
    echo "$digest" >"$stamp"
  fi
}

# Debian's chromium, which the browser tests drive. Never a browser download.
ensure_chromium() {
  local browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
  [ -x "$browser" ] && return 0
  echo "Installing Debian's chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "The browser tests need Debian's chromium: apt-get install chromium (or set CHROMIUM_PATH)" >&2
    return 1
  fi
}
