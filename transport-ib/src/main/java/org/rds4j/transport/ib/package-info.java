/**
 * RDS over InfiniBand (and RoCE, Soft-RoCE: anything rdma_cm can use), {@link org.rds4j.transport.ib.IbTransport},
 * registered with every stack through {@code META-INF/services}.
 * <p>
 * One RC queue pair per RDS connection, set up with rdma_cm on port 18634; the connect private data is the
 * kernel's {@code struct rds_ib_connect_private} ({@link org.rds4j.transport.ib.IbPrivateData}: protocol 4.1
 * offered, 3.1 accepted, ack sequence, initial credits). Messages travel as 4 KiB
 * {@link org.rds4j.transport.ib.Fragments} each carrying a copy of the 48-byte header, reassembled by
 * {@link org.rds4j.transport.ib.FragmentReassembler}; a fragment needs a send credit
 * ({@link org.rds4j.transport.ib.IbCredits}) and a send-ring slot ({@link org.rds4j.transport.ib.FragmentWriter});
 * headers advertise newly posted receive buffers in their credit byte and are always checksummed.
 * <p>
 * Threads: verbs and rdma_cm work runs on the stack's agent thread; one thread per stack,
 * {@code rds4j-ib-events-<stack>}, waits in poll(2) on the rdma_cm and completion channels once the CQs are
 * armed and wakes the agent. Without libibverbs/librdmacm or an RDMA device the transport serves no address
 * and says why at bind.
 * <p>
 * The binding underneath is the internal package {@code org.rds4j.transport.ib.verbs}. See {@code docs/transport-ib.md}.
 */
package org.rds4j.transport.ib;
