#!/usr/bin/env bash
# Installs what the web map's browser test (Tests/Integration/test_web_map.py) needs, idempotently:
#   apt: chromium, chromium-driver (/usr/bin/chromedriver), libjs-leaflet (/usr/share/javascript/leaflet,
#        which the gateway serves under /map/leaflet/)
#   PyPI (project-local venv .venv, lib.sh's venv_install): tools/requirements/browser.txt, selenium and
#        selenium-axe-python (axe-core 4.9.1). The test points selenium at /usr/bin/chromedriver
#        itself and sets SE_OFFLINE=true: Selenium Manager never downloads a driver or a browser.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

need_apt=()
for pkg in chromium chromium-driver libjs-leaflet; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install-browser: apt packages ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

venv_install browser

[ -x /usr/bin/chromium ] || { echo "install-browser: /usr/bin/chromium missing" >&2; exit 1; }
[ -x /usr/bin/chromedriver ] || { echo "install-browser: /usr/bin/chromedriver missing" >&2; exit 1; }
[ -f /usr/share/javascript/leaflet/leaflet.js ] || { echo "install-browser: leaflet.js missing" >&2; exit 1; }
echo "install-browser: ok ($(/usr/bin/chromium --version 2>/dev/null | head -n1), $(/usr/bin/chromedriver --version | head -n1 | cut -d' ' -f1-2), selenium $(.venv/bin/python -c 'import selenium; print(selenium.__version__)'))"
