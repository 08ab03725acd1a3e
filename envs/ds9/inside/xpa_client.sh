
export XPA_METHOD=local XPA_TMPDIR=$1; name=$2; mode=$3; work=$4; shift 4
n=0
for line in "$@"; do
  n=$((n + 1)); file=""
  case $line in
    "get "*) cmd=${line#get }
      case $cmd in *" > "*) file=${cmd##* > }; cmd=${cmd% > *} ;; esac
      case $file in ""|/*) ;; *) file="$work/$file" ;; esac
      res=$(xpaget "$name" "$cmd" 2>&1); rc=$? ;;
    *) cmd=${line#set }; res=$(xpaset -p "$name" "$cmd" 2>&1); rc=$? ;;
  esac
  case $res in *'XPA$ERROR'*) rc=${rc#0}; rc=${rc:-1} ;; esac
  if [ "$rc" = 0 ] && [ -n "$file" ]; then
    printf '%s\n' "$res" > "$file" || rc=2
  fi
  printf '\036%s %s\n%s\n' "$n" "$rc" "$res"
  [ "$rc" != 0 ] && [ "$mode" = stop ] && break
done
exit 0
