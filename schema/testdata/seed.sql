-- The two table definitions of issue 5's seed article: the fixture every
-- test that needs them reads (from another package by its path from the
-- module root, schema/testdata/seed.sql). config/tables.sql holds the same
-- statements as user_events and device_metrics.
CREATE TABLE kafka_source (
    user_id STRING,
    event_time TIMESTAMP(3),
    WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
    'connector' = 'kafka',
    'topic' = 'user_events',
    'properties.bootstrap.servers' = 'kafka:9092',
    'properties.group.id' = 'flink-consumer',
    'format' = 'json',
    'scan.startup.mode' = 'latest-offset',
    'scan.topic-partition-discovery.interval' = '1 min'
)

CREATE TABLE kafka_sink (
    device_id STRING,
    metric_value DOUBLE,
    PRIMARY KEY (device_id) NOT ENFORCED
) WITH (
    'connector' = 'kafka',
    'topic' = 'device_metrics',
    'properties.bootstrap.servers' = 'kafka:9092',
    'format' = 'avro-confluent',
    'avro-confluent.url' = 'http://schema-registry:8081',
    'sink.delivery-guarantee' = 'exactly-once',
    'sink.transactional-id-prefix' = 'flink-producer-'
)
