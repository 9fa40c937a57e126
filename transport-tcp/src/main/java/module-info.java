/**
 * RDS over TCP. Exported: {@link org.rds4j.transport.tcp.TcpConfig}, the transport's settings; the transport
 * itself is registered with every stack as a {@link org.rds4j.core.spi.TransportFactory}.
 */
// JNA has no module descriptor, only an Automatic-Module-Name
@SuppressWarnings("requires-automatic")
module org.rds4j.transport.tcp
{
    requires transitive org.rds4j.core;
    requires org.slf4j;
    requires com.sun.jna;
    // TCP keepalive settings (ExtendedSocketOptions)
    requires jdk.net;

    exports org.rds4j.transport.tcp;

    provides org.rds4j.core.spi.TransportFactory with org.rds4j.transport.tcp.TcpTransportFactory;
}
