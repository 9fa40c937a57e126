package org.rds4j;

/**
 * Which transport carries a socket's traffic; chosen before bind with {@link RdsOptions#RDS_TRANSPORT}.
 */
public enum TransportType
{
    /** InfiniBand (RDMA verbs) when the bound address belongs to an RDMA device, otherwise TCP. */
    AUTO,
    /** RDS over TCP (port 16385 by default). */
    TCP,
    /** RDS over InfiniBand reliable-connected queue pairs. */
    IB
}
