
db="$HOME/grassdata/sci"
rm -f "$db/user1/.gislock"
rm -rf "$db"/tmp_* 2>/dev/null
if [ $# -gt 0 ]; then
  grass "$db/user1" --exec sh -c '
    for f in "$@"; do
      base=${f##*/}; name=${base%.*}
      case "$f" in
        *.csv) v.in.ascii --quiet input="$f" output="$name" separator=comma skip=1 \
                 columns="x double precision, y double precision, id integer" x=1 y=2 cat=3 ;;
        *) r.in.gdal -o --quiet input="$f" output="$name" ;;
      esac || exit 3
    done' import "$@" || exit 3
fi
exec grass "$db/user1" --exec g.gui -f
