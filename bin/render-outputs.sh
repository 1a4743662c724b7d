#!/usr/bin/env bash
# Renders every workbook (.xlsx) and PDF in a folder to PNG pages, for a person to look at what finance and
# sub-merchants receive. Needs LibreOffice (soffice) for workbooks and poppler-utils (pdftoppm) for PDFs.
# Usage: bin/render-outputs.sh [DIR (default ./out)] [PNG_DIR (default DIR/png)]
set -euo pipefail
dir="${1:-./out}"
png="${2:-$dir/png}"
command -v pdftoppm >/dev/null || { echo "render-outputs: pdftoppm not found (apt-get install poppler-utils)" >&2; exit 69; }
mkdir -p "$png"
shopt -s nullglob
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for f in "$dir"/*.xlsx; do
  if ! command -v soffice >/dev/null; then echo "render-outputs: soffice not found: workbooks skipped" >&2; break; fi
  soffice --headless --norestore "-env:UserInstallation=file://$work/profile" --convert-to pdf --outdir "$work" "$f" >/dev/null 2>&1
  pdf="$work/$(basename "${f%.xlsx}").pdf"
  [ -f "$pdf" ] && pdftoppm -r 70 -png "$pdf" "$png/$(basename "${f%.xlsx}")-xlsx"
done
for f in "$dir"/*.pdf; do pdftoppm -r 70 -png "$f" "$png/$(basename "${f%.pdf}")-pdf"; done
ls "$png"
