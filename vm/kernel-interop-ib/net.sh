# network set-up: kernel side 10.89.0.1 on vk (rxek), rds4j side: rxej on vn (init_net, same wire), rdma_cm address
# 10.89.0.2 on macvlan ja in netns J with vn's ifindex
set -e
modprobe veth; modprobe macvlan; modprobe rds_rdma
# rxe (6.1) routes its packets in init_net with oif = the GID's netdev's ifindex: ja (in J) must have vn's ifindex.
# J's devices get indexes from J's own counter: lo 1, the dummies 2..19, then ja 20; vn is given 20 explicitly.
ip netns add J; ip -n J link set lo up
for i in $(seq 2 19); do echo "link add jd$i type dummy"; done | ip -n J -batch -
ip link add vn index 20 type veth peer name vk
ip link set vk up; ip link set vn up
rdma link add rxek type rxe netdev vk
rdma link add rxej type rxe netdev vn
ip link add link vn name ja netns J type macvlan mode private
for i in $(seq 2 19); do echo "link del jd$i"; done | ip -n J -batch -
[ "$(ip netns exec J cat /sys/class/net/ja/ifindex)" = "$(cat /sys/class/net/vn/ifindex)" ] || { echo "ifindex of ja differs from vn's"; exit 1; }
ip -n J addr add 10.89.0.2/24 dev ja
ip -n J link set ja up
VKMAC=$(cat /sys/class/net/vk/address); VNMAC=$(cat /sys/class/net/vn/address)
ip -n J neigh add 10.89.0.1 lladdr $VKMAC dev ja nud permanent
sleep 1
ip addr add 10.89.0.1/24 dev vk
ip addr add 10.89.0.2/32 dev vn noprefixroute
ip route add 10.89.0.1/32 dev vn src 10.89.0.2
ip route del local 10.89.0.1 table local
ip route del local 10.89.0.2 table local
ip route add local 10.89.0.1 dev vk table 100
ip route add local 10.89.0.2 dev vn table 100
ip rule add pref 10 iif vk lookup 100
ip rule add pref 11 iif vn lookup 100
ip neigh add 10.89.0.2 lladdr $VNMAC dev vk nud permanent
ip neigh add 10.89.0.1 lladdr $VKMAC dev vn nud permanent
for k in all default vk vn; do sysctl -qw net.ipv4.conf.$k.rp_filter=0 net.ipv4.conf.$k.accept_local=1; done
set +e
