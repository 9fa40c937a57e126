package org.rds4j;

/** Lazily opens the process-wide default stack and closes it at JVM exit. */
final class DefaultStackHolder
{
    static final RdsStack STACK = openDefault();

    private DefaultStackHolder()
    {
    }

    private static RdsStack openDefault()
    {
        final RdsStack stack = RdsStack.open(RdsStackConfig.defaults());
        Runtime.getRuntime().addShutdownHook(new Thread(stack::close, "rds4j-default-stack-close"));
        return stack;
    }
}
