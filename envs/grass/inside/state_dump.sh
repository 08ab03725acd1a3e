
export PYTHONNOUSERSITE=1
exec /usr/bin/python3 -I /usr/bin/grass --tmp-mapset "$HOME/grassdata/sci" \
    --exec /usr/bin/python3 -I -c "$1"
