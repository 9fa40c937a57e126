# net.sh - sourced by guest.sh: the network of the kernel RDS node (K) and the rds4j node (R), both in the guest.
#   K=10.89.0.1 R=10.89.0.2 by default (the kernel has the lower address); set both to swap them.
#
# Why it is wired like this (Debian's 6.1 kernel, rdma_rxe, rds_rdma):
#  - rdma_cm's ports are per network namespace, and rds_rdma listens on 0.0.0.0:18634 in the initial one, so an
#    rds4j node there cannot listen on 18634 (rdma_bind_addr: EADDRNOTAVAIL). rds4j runs in namespace J.
#  - rxe in 6.1 receives RoCE only on its UDP socket in the initial namespace and routes what it sends there
#    (ip_route_output_key(&init_net), output interface = the ifindex of the GID's netdev). An rxe device over a
#    veth end inside J sends nothing that arrives (checked: rping and ibv_rc_pingpong time out).
#  So both rxe devices and both veth ends stay in the initial namespace: rxek on vk (K), rxej on vn (R). J gets only
#  ja, a macvlan of vn with address R: rdma_cm in J finds R on ja, and rxej has a GID for it (ja is an upper
#  device of vn). ja must have vn's ifindex, because rxej routes its sends in the initial namespace by that index.
#  R is also put on vn (a /32 without a prefix route), so that rxej has a GID (R, vn) for the packets that arrive on
#  vn (rxe checks the destination GID against the receiving netdev); ja's GID comes first in the table, so a
#  connect request for R is taken as J's (rdma_cm picks the first GID that matches), and reaches rds4j's listener.
#  The local routes of K and R move from the local table into table 100, used only for packets that come in on
#  vk or vn: otherwise K to R would be routed through lo, which rxe cannot use; static neighbours replace ARP.
#  Side effect: the kernel sees R as one of its own IB addresses (rds_ib_laddr_check binds it), so it marks the
#  connection c_loopback and does not send its congestion map (rds4j's map reaches the kernel; see docs).
set -e
K=${K:-10.89.0.1} R=${R:-10.89.0.2}
modprobe veth; modprobe macvlan; modprobe rds_rdma
# J's devices get indexes from J's own counter: lo 1, the dummies 2..19, then ja 20; vn is given 20 explicitly
ip netns add J; ip -n J link set lo up
for i in $(seq 2 19); do echo "link add jd$i type dummy"; done | ip -n J -batch -
ip link add vn index 20 type veth peer name vk
ip link set vk up; ip link set vn up
rdma link add rxek type rxe netdev vk
rdma link add rxej type rxe netdev vn
ip link add link vn name ja netns J type macvlan mode private
for i in $(seq 2 19); do echo "link del jd$i"; done | ip -n J -batch -
[ "$(ip netns exec J cat /sys/class/net/ja/ifindex)" = "$(cat /sys/class/net/vn/ifindex)" ] || { echo "ifindex of ja differs from vn's"; exit 1; }
ip -n J addr add $R/24 dev ja
ip -n J link set ja up
VKMAC=$(cat /sys/class/net/vk/address); VNMAC=$(cat /sys/class/net/vn/address)
ip -n J neigh add $K lladdr $VKMAC dev ja nud permanent
sleep 1 # ja's GID first
ip addr add $K/24 dev vk
ip addr add $R/32 dev vn noprefixroute
ip route add $K/32 dev vn src $R
ip route del local $K table local
ip route del local $R table local
ip route add local $K dev vk table 100
ip route add local $R dev vn table 100
ip rule add pref 10 iif vk lookup 100
ip rule add pref 11 iif vn lookup 100
ip neigh add $R lladdr $VNMAC dev vk nud permanent
ip neigh add $K lladdr $VKMAC dev vn nud permanent
for k in all default vk vn; do sysctl -qw net.ipv4.conf.$k.rp_filter=0 net.ipv4.conf.$k.accept_local=1; done
g1=$(cat /sys/class/infiniband/rxej/ports/1/gid_attrs/ndevs/1 2>/dev/null)
[ "$g1" = ja ] || { echo "rxej's GID 1 is on '$g1', not ja"; exit 1; }
set +e
