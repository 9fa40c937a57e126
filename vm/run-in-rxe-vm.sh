#!/bin/bash
# run-in-rxe-vm.sh - rds4j's qemu test harness (vm/README.md): run a command inside a throw-away QEMU guest that has
# Soft-RoCE (rdma_rxe) configured, with the HOST root filesystem visible.
#
#   usage: run-in-rxe-vm.sh 'command string'       (run by bash -c in the guest)
#
# Guest: Debian linux-image-amd64 kernel (rdma_rxe etc. as modules) + tiny
# busybox initramfs.  The host's / is shared read-only over virtio-9p and
# overlaid with a tmpfs, so every host binary, JDK, library and jar is
# usable, and writes inside the guest are discarded, except in the
# directories listed in RXE_VM_RW (default: the current directory), which are
# shared read-write at the same path.  In the guest: a dummy netdev "eth0"
# (10.77.0.1/24, no outside connectivity at all), RDMA device "rxe0" on it,
# ulimit -l unlimited, running as root, host environment and cwd carried over,
# stdout/stderr streamed back separately.
# Exit status = the command's exit status; 125 = VM/setup failure.
#
# Environment knobs:
#   RXE_VM_CACHE   cache dir (kernel, initrd, run dirs)  [$HOME/.cache/rxe-vm]
#   RXE_VM_ACCEL   auto|kvm|tcg  (auto = kvm only if /dev/kvm usable AND the
#                  CPU has vmx/svm, else tcg)              [auto]
#   RXE_VM_TCG_THREAD single|multi: TCG runs the vCPUs in one host thread, or
#                  one thread each (MTTCG). multi is faster, but JVMs in the
#                  guest died now and then with SIGSEGV at the entry of JIT code
#                  being patched (a translation racing the patch, it seems):
#                  twice in about a dozen IB suite runs, once in CI [single]
#   RXE_VM_MEM     guest RAM in MiB                        [4096]
#   RXE_VM_CPUS    guest vCPUs                             [host nproc, max 4]
#   RXE_VM_TIMEOUT seconds before the VM is killed         [3600]
#   RXE_VM_RW      ':'-separated host dirs shared read-write [$PWD, unless /]
#   RXE_VM_IP      IPv4/prefix of eth0 in the guest        [10.77.0.1/24]
#   RXE_VM_VERBOSE 1 = print the guest kernel console log to stderr at the end
set -uo pipefail

CACHE=${RXE_VM_CACHE:-${HOME:-/root}/.cache/rxe-vm}
MEM=${RXE_VM_MEM:-4096}
CPUS=${RXE_VM_CPUS:-$(n=$(nproc); echo $(( n > 4 ? 4 : n )))}
TIMEOUT=${RXE_VM_TIMEOUT:-3600}
GUEST_IP=${RXE_VM_IP:-10.77.0.1/24}
ACCEL=${RXE_VM_ACCEL:-auto}
if [ -n "${RXE_VM_RW+x}" ]; then RW=$RXE_VM_RW; elif [ "$PWD" != / ]; then RW=$PWD; else RW=; fi

die() { echo "run-in-rxe-vm: $*" >&2; exit 125; }
[ $# -ge 1 ] || { echo "usage: $0 'command string'" >&2; exit 2; }
CMD="$*"
case "$CACHE" in *[\ ,:]*) die "RXE_VM_CACHE must not contain space, comma or colon";; esac

mkdir -p "$CACHE" || die "cannot create $CACHE"
CACHE=$(cd "$CACHE" && pwd -P)

# ---------------------------------------------------------------- setup (cached)
setup() {
  local pkgs="qemu-system-x86 busybox-static rdma-core ibverbs-utils rdmacm-utils ibverbs-providers libibverbs1 librdmacm1 iproute2 kmod cpio xz-utils"
  local missing="" p
  for p in $pkgs; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"; done
  if [ -n "$missing" ]; then
    echo "run-in-rxe-vm: apt-get install$missing" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing; } >&2 || die "apt-get install failed"
  fi
  if [ ! -e "$CACHE/kernel/ok" ]; then
    local kpkg
    kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
    [ -n "$kpkg" ] || { apt-get update -qq >&2; kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}'); }
    [ -n "$kpkg" ] || die "cannot resolve linux-image-amd64"
    rm -rf "$CACHE/kernel" "$CACHE/deb"; mkdir -p "$CACHE/deb"
    (cd "$CACHE/deb" && apt-get download "$kpkg" >&2) || die "apt-get download $kpkg failed"
    dpkg-deb -x "$CACHE"/deb/*.deb "$CACHE/kernel" || die "dpkg-deb -x failed"
    rm -rf "$CACHE/deb"
    local kver; kver=$(ls "$CACHE/kernel/lib/modules")
    # save ~270 MB: drop module trees irrelevant to a virtual RDMA guest
    (cd "$CACHE/kernel/lib/modules/$kver/kernel" && rm -rf sound drivers/gpu drivers/media drivers/net/wireless \
        drivers/net/ethernet drivers/iio drivers/usb drivers/scsi drivers/hwmon drivers/infiniband/hw)
    depmod -b "$CACHE/kernel" "$kver" || die "depmod failed"
    # uncompressed ELF vmlinux boots via PVH, skipping ~3 s of xz decompression under TCG
    local z="$CACHE/kernel/boot/vmlinuz-$kver" off
    off=$(grep -abo $'\xfd7zXZ\x00' "$z" | head -1 | cut -d: -f1)
    [ -n "$off" ] && { tail -c +$((off + 1)) "$z" | xz -dc --single-stream > "$CACHE/kernel/boot/vmlinux-$kver"; } 2>/dev/null
    [ "$(head -c 4 "$CACHE/kernel/boot/vmlinux-$kver" 2>/dev/null)" = $'\x7fELF' ] || rm -f "$CACHE/kernel/boot/vmlinux-$kver"
    touch "$CACHE/kernel/ok"
  fi
  KVER=$(ls "$CACHE/kernel/lib/modules")
  VMLINUZ="$CACHE/kernel/boot/vmlinux-$KVER"
  [ -s "$VMLINUZ" ] || VMLINUZ="$CACHE/kernel/boot/vmlinuz-$KVER"
  INITRD="$CACHE/initrd-$KVER.img"
  if [ ! -s "$INITRD" ] || [ "$INITRD" -ot "${BASH_SOURCE[0]}" ]; then build_initrd || die "initrd build failed"; fi
}

build_initrd() {
  local R; R=$(mktemp -d "$CACHE/initrd.XXXXXX") || return 1
  mkdir -p "$R"/{bin,proc,sys,dev,host,newroot,ovl,mods}
  cp /bin/busybox "$R/bin/busybox" || return 1
  local m f
  for m in virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -d "$CACHE/kernel" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
  done | awk '!s[$0]++' | while read -r f; do cp "$f" "$R/mods/" && basename "$f" >> "$R/mods/order"; done
  [ -s "$R/mods/order" ] || return 1
  # ---- stage 1: initramfs /init (busybox) -> overlay(host / ro over 9p, tmpfs) -> switch_root
  cat > "$R/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do insmod /mods/$m || echo "rxe-vm: insmod $m failed"; done
fail() { echo "rxe-vm: $*"; echo b > /proc/sysrq-trigger; }
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /host || fail "9p mount of host / failed"
mount -t tmpfs -o size=50%,mode=755 tmpfs /ovl && mkdir -p /ovl/u /ovl/w
mount -t overlay overlay -o lowerdir=/host,upperdir=/ovl/u,workdir=/ovl/w /newroot || fail "overlay mount failed"
for d in proc sys dev; do mount --move /$d /newroot/$d; done
cp /stage2 /newroot/.rxe-vm-stage2 && exec switch_root /newroot /bin/sh /.rxe-vm-stage2
fail "switch_root failed"
EOF
  # ---- stage 2: runs as PID 1 in the overlay root, with the host's userspace
  cat > "$R/stage2" <<'EOF'
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
arg() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" /proc/cmdline; }
RUN=$(arg rxe_run); KVER=$(uname -r)
bye() { sync; umount "$RUN"; tac "$RUN/rwdirs" | while IFS= read -r d; do umount "$d"; done; echo b > /proc/sysrq-trigger; sleep 10; }
err() { echo "rxe-vm: $*" >&2; echo "rxe-vm: $*" > /dev/ttyS2 2>/dev/null; }
ts() { echo "rxe-vm: $* at uptime $(cut -d' ' -f1 /proc/uptime)s"; }
ts stage2
mkdir -p /dev/pts /dev/shm "/lib/modules/$KVER"
mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm; mount -t tmpfs tmpfs /run
# $RUN's files are already visible (read-only) through the host root; mount the
# rw dirs first, then $RUN itself read-write on top (it may lie inside a rw dir)
i=0; while IFS= read -r d; do
  mkdir -p "$d" && mount -t 9p -o trans=virtio,version=9p2000.L,cache=mmap,msize=512000 "rw$i" "$d" || err "rw mount of $d failed"
  i=$((i+1)); done < "$RUN/rwdirs"
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=512000 xfer "$RUN" || { err "mount of run dir failed"; bye; }
mount --bind "$(cat "$RUN/moddir")" "/lib/modules/$KVER"
ts mounts done
hostname rxe-vm; ip link set lo up
IP=$(arg rxe_ip)
# module order (modprobe resolves deps): udp_tunnel ip6_udp_tunnel ib_core ib_uverbs rdma_rxe ; configfs ib_cm iw_cm rdma_cm rdma_ucm ; dummy
ok=1
modprobe rdma_rxe && modprobe rdma_ucm && modprobe dummy numdummies=0 || ok=0
ts modules loaded
ip link add eth0 type dummy && ip addr add "$IP" dev eth0 && ip link set eth0 up || ok=0
echo "${IP%/*} rxe-vm" >> /etc/hosts
rdma link add rxe0 type rxe netdev eth0 || ok=0
[ -e /dev/infiniband/uverbs0 ] || ok=0
if [ $ok = 0 ]; then err "RDMA setup failed:"; dmesg | tail -20 > /dev/ttyS2; echo 125 > "$RUN/rc"; bye; fi
ulimit -l unlimited; ulimit -n 65536
stty -F /dev/ttyS1 raw -echo; stty -F /dev/ttyS2 raw -echo
echo "rxe-vm: ready at uptime $(cut -d' ' -f1 /proc/uptime)s"
RXE_VM_RUN=$RUN RXE_VM_IP=${IP%/*} RXE_VM_DEV=rxe0 RXE_VM_NETDEV=eth0 \
  bash -c '. "$RXE_VM_RUN/env"; export RXE_VM_IP RXE_VM_DEV RXE_VM_NETDEV; cd "$(cat "$RXE_VM_RUN/cwd")" || exit 125; exec bash -c "$(cat "$RXE_VM_RUN/cmd")" rxe-vm' \
  < /dev/null > /dev/ttyS1 2> /dev/ttyS2
echo $? > "$RUN/rc"
echo "rxe-vm: command exited $(cat "$RUN/rc") at uptime $(cut -d' ' -f1 /proc/uptime)s"
bye
EOF
  chmod +x "$R/init"
  (cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$INITRD.tmp" && mv "$INITRD.tmp" "$INITRD"
  local rc=$?; rm -rf "$R"; return $rc
}

exec 9> "$CACHE/.lock"; flock 9; setup; flock -u 9; exec 9>&-

# ---------------------------------------------------------------- accel
case "$ACCEL" in
  auto) if [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then ACCEL=kvm; else ACCEL=tcg; fi;;
  kvm|tcg) ;;
  *) die "RXE_VM_ACCEL must be auto, kvm or tcg";;
esac
TCG_THREAD=${RXE_VM_TCG_THREAD:-single}
case "$TCG_THREAD" in single|multi) ;; *) die "RXE_VM_TCG_THREAD must be single or multi";; esac
if [ "$ACCEL" = kvm ]; then ACCEL_OPTS=(-accel kvm -cpu host); else ACCEL_OPTS=(-accel "tcg,thread=$TCG_THREAD" -cpu max); fi

# ---------------------------------------------------------------- per-run dir
mkdir -p "$CACHE/runs"
RUN=$(mktemp -d "$CACHE/runs/run.XXXXXX") || die "mktemp failed"
QPID=; CAT1=; CAT2=
cleanup() {
  [ -n "$QPID" ] && kill "$QPID" 2>/dev/null
  [ -n "$CAT1" ] && kill "$CAT1" 2>/dev/null
  [ -n "$CAT2" ] && kill "$CAT2" 2>/dev/null
  rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

printf '%s\n' "$CMD" > "$RUN/cmd"
pwd -P > "$RUN/cwd"
echo "$CACHE/kernel/lib/modules/$KVER" > "$RUN/moddir"
export -p | grep -vE '^declare -x (PWD|OLDPWD|SHLVL|_|HOSTNAME|BASH[A-Z_]*|SHELLOPTS|UID|EUID|PPID|TERM|RXE_VM_[A-Z]*)(=|$)' > "$RUN/env"

RW_OPTS=(); : > "$RUN/rwdirs"; i=0
IFS=: read -r -a RWDIRS <<< "$RW"
for d in "${RWDIRS[@]}"; do
  [ -n "$d" ] || continue
  d=$(cd "$d" 2>/dev/null && pwd -P) || die "RXE_VM_RW: no such directory: $d"
  case "$d" in /) die "refusing to share / read-write";; *[\ ,]*) die "RXE_VM_RW dir must not contain space or comma: $d";; esac
  echo "$d" >> "$RUN/rwdirs"
  RW_OPTS+=(-virtfs "local,path=$d,mount_tag=rw$i,security_model=none,multidevs=remap")
  i=$((i+1))
done

mkfifo "$RUN/out.in" "$RUN/out.out" "$RUN/err.in" "$RUN/err.out" || die "mkfifo failed"
exec 7<> "$RUN/out.out" 8<> "$RUN/err.out"        # keep the readers from blocking if qemu dies early
cat "$RUN/out.out" 7>&- 8>&- & CAT1=$!
cat "$RUN/err.out" >&2 7>&- 8>&- & CAT2=$!

timeout -k 5 "$TIMEOUT" qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \
  -M pc "${ACCEL_OPTS[@]}" -smp "$CPUS" -m "$MEM" \
  -kernel "$VMLINUZ" -initrd "$INITRD" \
  -append "console=ttyS0 quiet loglevel=4 panic=-1 rxe_run=$RUN rxe_ip=$GUEST_IP" \
  -chardev file,id=con,path="$RUN/console.log" -serial chardev:con \
  -chardev pipe,id=out,path="$RUN/out" -serial chardev:out \
  -chardev pipe,id=err,path="$RUN/err" -serial chardev:err \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$RUN,mount_tag=xfer,security_model=none,multidevs=remap" \
  "${RW_OPTS[@]}" < /dev/null 7>&- 8>&- &
QPID=$!
wait "$QPID"; QRC=$?; QPID=
exec 7>&- 8>&-
wait "$CAT1" "$CAT2"; CAT1=; CAT2=

if [ "${RXE_VM_VERBOSE:-0}" = 1 ]; then echo "----- guest console ($ACCEL) -----" >&2; cat "$RUN/console.log" >&2; fi
if [ -s "$RUN/rc" ]; then
  exit "$(cat "$RUN/rc")"
fi
echo "run-in-rxe-vm: guest did not report an exit status (qemu rc=$QRC, accel=$ACCEL$( [ $QRC = 124 ] && echo ", timed out after ${TIMEOUT}s")); console tail:" >&2
tail -n 30 "$RUN/console.log" >&2
exit 125
