#!/usr/bin/env bash
# Installs what docgen needs on a fresh Debian machine, then its npm packages.
# System packages (Chromium, fonts incl. CJK and emoji, nats-server, poppler-utils, qpdf, docker-compose) need root; without root
# this script says exactly what to install and stops. Safe to run again: it skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

# docker-compose: only its `config` check of deploy/compose/compose.yaml runs (no daemon);
# installed so that CI validates the one-machine setup instead of skipping it.
# fonts-noto-cjk, fonts-noto-color-emoji: CJK and emoji glyphs in PDFs; libharfbuzz-bin (hb-subset)
# and fontconfig (fc-query, fc-cache): `docgen fonts build` (below) cuts the CJK fonts with them;
# qpdf: encrypts PDFs of versions with a password; icc-profiles-free: the sRGB ICC profile of PDF/A output
# intents (/usr/share/color/icc/sRGB.icc); libxml2-utils (xmllint): e-invoices are checked against the
# Factur-X XSD with it. python3: the Python client's tests (sdk/python).
# zbar-tools (zbarimg) and python3-zxing-cpp: the tests' independent barcode and QR code readers
# (zxing-cpp reads the Data Matrix, PDF417 and Aztec codes zbar cannot).
APT_PACKAGES=(chromium-headless-shell chromium fonts-liberation fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji fontconfig libharfbuzz-bin nats-server poppler-utils qpdf icc-profiles-free libxml2-utils docker-compose python3 zbar-tools python3-zxing-cpp)

missing=()
[ -x /usr/bin/chromium-headless-shell ] || missing+=(chromium-headless-shell)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
dpkg -s fonts-liberation >/dev/null 2>&1 || missing+=(fonts-liberation)
dpkg -s fonts-noto-core >/dev/null 2>&1 || missing+=(fonts-noto-core)
dpkg -s fonts-noto-cjk >/dev/null 2>&1 || missing+=(fonts-noto-cjk)
dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || missing+=(fonts-noto-color-emoji)
command -v fc-query >/dev/null 2>&1 || missing+=(fontconfig)
command -v hb-subset >/dev/null 2>&1 || missing+=(libharfbuzz-bin)
command -v qpdf >/dev/null 2>&1 || missing+=(qpdf)
[ -f /usr/share/color/icc/sRGB.icc ] || missing+=(icc-profiles-free)
command -v xmllint >/dev/null 2>&1 || missing+=(libxml2-utils)
[ -x /usr/sbin/nats-server ] || command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v zbarimg >/dev/null 2>&1 || missing+=(zbar-tools)
dpkg -s python3-zxing-cpp >/dev/null 2>&1 || missing+=(python3-zxing-cpp)

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: these Debian packages are missing: ${missing[*]}" >&2
    echo "setup: install them as root, then run this script again:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${APT_PACKAGES[*]}" >&2
    exit 1
  fi
fi

# npm packages. puppeteer must not download a browser (no network; we use Debian's
# Chromium): .puppeteerrc.cjs says so, and package.json's allowScripts runs only the
# install scripts of `node` (the pinned Node 24 runtime) and `@bufbuild/buf`.
export PUPPETEER_SKIP_DOWNLOAD=1
if [ ! -x node_modules/.bin/node ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

node_version=$(node_modules/.bin/node --version)
case "$node_version" in
  v24.*) ;;
  *) echo "setup: expected the pinned Node 24 at node_modules/.bin/node, found $node_version" >&2; exit 1 ;;
esac
# The portal (web app served by the admin listener) is built here, not committed: rebuilt
# when its sources, the generated API code or the lock file are newer than the build.
portal_index=portal/dist/index.html
if [ ! -f "$portal_index" ] || [ -n "$(find portal/src portal/index.html portal/vite.config.ts src/gen package-lock.json -newer "$portal_index" -print -quit)" ]; then
  echo "setup: building the portal (npm run build:portal)"
  npm run --silent build:portal
fi

# The CJK fonts' everyday subsets Chromium prints with (docs/architecture.md#print-path): about
# 6 s and 118 MB in build/fonts/, made again only when the installed collections change.
node_modules/.bin/node bin/docgen.js fonts build --if-stale

echo "setup: ready (node $node_version for npm scripts, $(/usr/lib/chromium/chromium-headless-shell --version 2>/dev/null | head -1))"
