/**
 * Optional Micrometer binding of an rds4j stack: {@link org.rds4j.micrometer.RdsStackMetrics}.
 */
// "requires-automatic": micrometer-core 1.x has no module descriptor, only an Automatic-Module-Name
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module org.rds4j.micrometer
{
    requires transitive org.rds4j.core;
    // RdsStackMetrics is a MeterBinder: the application's Micrometer, provided by it
    requires transitive micrometer.core;

    exports org.rds4j.micrometer;
}
