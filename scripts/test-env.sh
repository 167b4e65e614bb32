#!/usr/bin/env bash
# test-env.sh: what `make test` needs on this machine, set up or named.
# It starts the local PostgreSQL cluster if it is down, and installs
# Debian's chromium, chromium-driver, prometheus (promtool), tesseract-ocr
# with its English, German, French, Spanish, Dutch, Japanese and
# orientation data, and poppler-utils (pdftoppm) when they are missing
# and it may (root, or sudo without a password). Anything it cannot
# provide stops the tests at once with one line naming it and the command
# that adds it.
set -uo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO="none"; fi
fi

missing=0
need() { echo "make test: $1 is missing; $2" >&2; missing=1; }

apt_install() { # packages...
  [ "$SUDO" = "none" ] && return 1
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -q --no-install-recommends "$@" >/dev/null 2>&1 ||
    { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q --no-install-recommends "$@" >/dev/null 2>&1; }
}

# PostgreSQL: the store suite runs against it.
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ] && [ "$SUDO" != "none" ]; then
    echo "make test: starting the local PostgreSQL cluster" >&2
    $SUDO pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start >/dev/null 2>&1 || true
    for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null && break; sleep 1; done
  fi
  pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null ||
    need "PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth)" "start it with: pg_ctlcluster --skip-systemctl-redirect \$(ls /etc/postgresql) main start"
fi

# Chromium and its driver: the web page's tests drive a real browser.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  echo "make test: installing chromium and chromium-driver" >&2
  apt_install chromium chromium-driver
  command -v chromium >/dev/null && command -v chromedriver >/dev/null ||
    need "chromium or chromedriver" "install them with: sudo apt-get install chromium chromium-driver"
fi

# tesseract and pdftoppm: scanned statements are imported by OCR, and
# their tests read scans of the sample PDFs.
if ! command -v tesseract >/dev/null || ! command -v pdftoppm >/dev/null || ! tesseract --list-langs 2>/dev/null | grep -qx eng; then
  echo "make test: installing tesseract-ocr, tesseract-ocr-eng and poppler-utils" >&2
  apt_install tesseract-ocr tesseract-ocr-eng poppler-utils
  command -v tesseract >/dev/null && command -v pdftoppm >/dev/null && tesseract --list-langs 2>/dev/null | grep -qx eng ||
    need "tesseract (with English) or pdftoppm" "install them with: sudo apt-get install --no-install-recommends tesseract-ocr tesseract-ocr-eng poppler-utils"
fi

# tesseract's language data: receipts are read in English, German,
# French, Spanish, Dutch and Japanese, and turned upright by its
# orientation detection (osd).
langs_missing() {
  local have; have=$(tesseract --list-langs 2>/dev/null)
  for l in deu fra spa nld jpn osd; do echo "$have" | grep -qx "$l" || echo "$l"; done
}
if command -v tesseract >/dev/null && [ -n "$(langs_missing)" ]; then
  echo "make test: installing tesseract's language data ($(langs_missing | tr '\n' ' '))" >&2
  apt_install tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa tesseract-ocr-nld tesseract-ocr-jpn tesseract-ocr-osd
  [ -z "$(langs_missing)" ] ||
    need "tesseract language data ($(langs_missing | tr '\n' ' '))" "install it with: sudo apt-get install --no-install-recommends tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa tesseract-ocr-nld tesseract-ocr-jpn tesseract-ocr-osd"
fi

# promtool: the alert rules are checked and unit-tested.
if ! command -v promtool >/dev/null; then
  echo "make test: installing prometheus (for promtool)" >&2
  apt_install prometheus
  command -v promtool >/dev/null || need "promtool" "install it with: sudo apt-get install --no-install-recommends prometheus"
fi

exit $missing
