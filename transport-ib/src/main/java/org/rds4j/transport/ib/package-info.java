/**
 * RDS over InfiniBand: <b>not built yet</b>.
 * <p>
 * This package is a placeholder. It contains no transport class, nothing registers an InfiniBand transport with
 * the stack, and so a socket that asks for {@link org.rds4j.TransportType#IB} is refused at bind with
 * {@link org.rds4j.RdsResult#EADDRNOTAVAIL}. Use {@link org.rds4j.TransportType#TCP} (or
 * {@link org.rds4j.TransportType#AUTO}, which falls back to TCP).
 * <p>
 * Planned design, for whoever writes it:
 * <ul>
 *   <li>libibverbs and librdmacm called through JNA (the module already depends on {@code jna});</li>
 *   <li>one reliable-connected (RC) queue pair per peer connection;</li>
 *   <li>messages split into 4 KiB fragments, each carrying an {@code rds_header};</li>
 *   <li>credit-based flow control, using the header's {@code credit} byte to advertise posted receives.</li>
 * </ul>
 */
package org.rds4j.transport.ib;
