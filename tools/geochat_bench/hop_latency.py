"""Produce → consume latency of one hop on a broker, by fetch wait (deploy/bench-hop.sh): on Tansu a
hop takes up to about half the consumer's fetch wait, which is what the `tansu` profile's waits are
chosen by (docs/architecture.md, "Kafka settings"). One 1-partition topic per wait, a consumer
without a group at its start, a producer sending one record every 50-150 ms (random) for 12 s;
each record carries its send time.

  python -m geochat_bench.hop_latency --brokers HOST:PORT --waits 10,20,40,100
"""
import argparse
import random
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def hop(brokers, wait_ms, seconds=12):
    topic = f"hop{wait_ms}-{random.getrandbits(30)}"
    admin = AdminClient({"bootstrap.servers": brokers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    consumer = Consumer({"bootstrap.servers": brokers, "group.id": "hop-" + topic, "fetch.wait.max.ms": wait_ms,
                         "enable.auto.commit": False, "enable.metrics.push": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    producer = Producer({"bootstrap.servers": brokers, "linger.ms": 0, "enable.metrics.push": False})
    stop = time.time() + seconds
    latencies = []

    def produce():
        while time.time() < stop - 1:
            producer.produce(topic, str(time.time()).encode())
            producer.flush()
            time.sleep(random.uniform(0.05, 0.15))

    sender = threading.Thread(target=produce)
    sender.start()
    while time.time() < stop:
        record = consumer.poll(0.2)
        if record is not None and not record.error():
            latencies.append((time.time() - float(record.value())) * 1000)
    sender.join()
    consumer.close()
    return sorted(latencies)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--brokers", required=True)
    parser.add_argument("--waits", default="10,20,40,100")
    args = parser.parse_args()
    print("| fetch wait ms | records | p50 ms | p90 ms | p99 ms | max ms |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for wait in (int(w) for w in args.waits.split(",")):
        t = hop(args.brokers, wait)
        print(f"| {wait} | {len(t)} | {t[len(t) // 2]:.1f} | {t[int(len(t) * .9)]:.1f} | "
              f"{t[int(len(t) * .99)]:.1f} | {t[-1]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
