
set -e
exe=$1 chan=$2 stage=$3 project=$6 image=$7 work=$8
rm -rf "$chan"
mkdir -p "$chan"
printf '%s' "$4" > "$chan/make_project.groovy"
printf '%s' "$5" > "$chan/channel.groovy"
if [ -n "$stage" ]; then
  printf '%s' "$stage" > "$chan/stage.json"
  "$exe" script "$chan/make_project.groovy" -a "$chan/stage.json" -a "$project" -a "$work"
  exec "$exe" -q "-Dqupath.startup.script=$chan/channel.groovy" \
    -p "$project/project.qpproj" -i "$image"
fi
exec "$exe" -q "-Dqupath.startup.script=$chan/channel.groovy"
