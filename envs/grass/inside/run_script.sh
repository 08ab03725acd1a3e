
export GISBASE=/usr/lib/grass82
export PATH="$GISBASE/bin:$GISBASE/scripts:$PATH" LD_LIBRARY_PATH="$GISBASE/lib"
export PYTHONPATH="$GISBASE/etc/python" GRASS_PYTHON=/usr/bin/python3 GRASS_OVERWRITE=1
export PYTHONNOUSERSITE=1
export GISRC="${TMPDIR:-/tmp}/sciagent-grass-$$.gisrc"
err="${TMPDIR:-/tmp}/sciagent-grass-$$.err"
printf 'GISDBASE: %s\nLOCATION_NAME: sci\nMAPSET: user1\n' "$HOME/grassdata" > "$GISRC"
code=$(cat)
( eval "$code" ) 2> "$err"
rc=$?
printf '\n@@sciagent-grass-rc %s\n' "$rc"
tail -c 2000 "$err"
rm -f "$GISRC" "$err"
