/**
 * The public API of rds4j: {@link org.rds4j.RdsStack}, {@link org.rds4j.RdsSocket}, their options and result
 * codes. An implementation ({@code org.rds4j.core}) is found with {@link java.util.ServiceLoader}.
 */
module org.rds4j
{
    exports org.rds4j;

    uses org.rds4j.RdsStackProvider;
}
