package org.rds4j.transport.ib.verbs;

/**
 * The installed libibverbs, librdmacm or libffi does not have the struct layout or ABI that
 * {@link VerbsLayout} records, or the platform is not one it was verified on. The IB transport refuses to
 * start.
 */
public final class VerbsLayoutException extends IllegalStateException
{
    private static final long serialVersionUID = 1L;

    public VerbsLayoutException(final String detail)
    {
        super("InfiniBand verbs ABI mismatch, refusing to start the IB transport: " + detail +
            " (rds4j's verbs layout was verified against " + VerbsLayout.VERIFIED_AGAINST + ")");
    }
}
