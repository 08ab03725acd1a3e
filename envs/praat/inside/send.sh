
read pid rest < "$HOME/.praat-dir/pid"; [ -n "$pid" ] || exit 3
mask=0
while read key value; do [ "$key" = SigCgt: ] && mask=$value; done < "/proc/$pid/status"
[ $(( 0x$mask & 0x200 )) -ne 0 ] || exit 4
read -r script && cat > "$script" && exec praat --send "$script"
