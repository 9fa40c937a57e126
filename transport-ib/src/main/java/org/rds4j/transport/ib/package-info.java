/**
 * RDS over InfiniBand: <b>the transport is not built yet</b>.
 * <p>
 * Nothing registers an InfiniBand transport with the stack, and so a socket that asks for
 * {@link org.rds4j.TransportType#IB} is refused at bind with {@link org.rds4j.RdsResult#EADDRNOTAVAIL}. Use
 * {@link org.rds4j.TransportType#TCP} (or {@link org.rds4j.TransportType#AUTO}, which falls back to TCP).
 * <p>
 * Built (part 1): the verbs binding in {@link org.rds4j.transport.ib.verbs}: libibverbs and librdmacm through
 * JNA, the struct layout checked against the C headers, send and receive rings of registered 4 KiB
 * fragments, completion queues with completion channels. See {@code docs/transport-ib.md}.
 * <p>
 * Planned (part 2): one RC queue pair per RDS connection; messages split into 4 KiB fragments, each carrying an
 * {@code rds_header}; credit-based flow control using the header's {@code credit} byte; the kernel's
 * {@code rds_ib_connect_private} as connect private data.
 */
package org.rds4j.transport.ib;
