
export SCIAGENT_QGIS_OPEN="$3"
rm -rf "$SCIAGENT_QGIS_CHANNEL" && mkdir -p "$SCIAGENT_QGIS_CHANNEL/req" || exit 3
printf '%s' "$1" > "$2" || exit 3
exec qgis --nologo --noversioncheck --profiles-path "$HOME/qgis" --code "$2"
