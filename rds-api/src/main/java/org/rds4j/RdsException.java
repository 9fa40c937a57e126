package org.rds4j;

import java.io.IOException;

/**
 * A failure of a call that is not on the hot path (bind, option setting), carrying the same code the
 * kernel's RDS would return as an errno.
 */
public class RdsException extends IOException
{
    private static final long serialVersionUID = 1L;

    /** The negative {@link RdsResult} code. */

    private final int code;

    /**
     * @param code    one of the negative {@link RdsResult} codes.
     * @param message what went wrong, for a person.
     */
    public RdsException(final int code, final String message)
    {
        super(RdsResult.name(code) + ": " + message);
        this.code = code;
    }

    /**
     * @return the negative {@link RdsResult} code, e.g. {@link RdsResult#EADDRINUSE}.
     */
    public int code()
    {
        return code;
    }
}
