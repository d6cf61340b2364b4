// Node amqplib against a Ganglion broker. Usage: node test.js amqp://guest:guest@127.0.0.1:5672
// Prints "amqplib: N passed, 0 failed" and exits 0 when every step held, 1 otherwise.
'use strict';
const amqp = require('amqplib');

const url = process.argv[2] || 'amqp://guest:guest@127.0.0.1:5672';
const COUNT = 100;

async function main() {
  const connection = await amqp.connect(url);
  let passed = 0;
  const check = (ok, what) => {
    if (!ok) throw new Error('failed: ' + what);
    passed++;
  };
  try {
    const channel = await connection.createConfirmChannel();
    const { queue } = await channel.assertQueue('', { exclusive: true });
    check(queue.startsWith('amq.gen-'), 'server-named queue');
    await channel.assertExchange('amqplib.topic', 'topic', { durable: false });
    await channel.bindQueue(queue, 'amqplib.topic', 'node.#');

    for (let i = 0; i < COUNT; i++) {
      channel.publish('amqplib.topic', 'node.test', Buffer.from('msg-' + i), { persistent: true, messageId: String(i) });
    }
    await channel.waitForConfirms();
    check(true, 'confirms');

    const got = [];
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('timed out consuming, got ' + got.length)), 10000);
      channel.prefetch(10);
      channel.consume(queue, (msg) => {
        got.push(msg.content.toString());
        channel.ack(msg);
        if (got.length === COUNT) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    check(got.length === COUNT, 'consumed all');
    check(got.every((body, i) => body === 'msg-' + i), 'in order');
    const declared = await channel.checkQueue(queue);
    check(declared.messageCount === 0, 'nothing left after acks');

    // a stream: every reader reads it from where it chooses, each delivery with its x-stream-offset
    await channel.assertQueue('amqplib.stream', { durable: true, arguments: { 'x-queue-type': 'stream' } });
    for (let i = 0; i < 20; i++) {
      channel.sendToQueue('amqplib.stream', Buffer.from('event-' + i), { persistent: true });
    }
    await channel.waitForConfirms();
    const read = async (offset, count) => {
      const reader = await connection.createChannel();
      await reader.prefetch(10);
      const reads = [];
      await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('timed out reading the stream, got ' + reads.length)), 10000);
        reader.consume('amqplib.stream', (msg) => {
          reads.push({ body: msg.content.toString(), offset: Number(msg.properties.headers['x-stream-offset']) });
          reader.ack(msg);
          if (reads.length === count) {
            clearTimeout(timer);
            resolve();
          }
        }, { arguments: { 'x-stream-offset': offset } });
      });
      await reader.close();
      return reads;
    };
    const all = await read('first', 20);
    check(all.every((r, i) => r.body === 'event-' + i && (i === 0 || r.offset > all[i - 1].offset)),
      'a stream read from first, in order, offsets increasing');
    const tail = await read(all[15].offset, 5);
    check(tail.map((r) => r.body).join() === all.slice(15).map((r) => r.body).join(), 'a stream read from an offset');
    const again = await read('first', 20);
    check(again.length === 20, 'reading removed nothing');
    await channel.deleteQueue('amqplib.stream');
    await channel.close();
  } finally {
    await connection.close();
  }
  console.log(`amqplib: ${passed} passed, 0 failed`);
}

main().catch((error) => {
  console.error(error);
  console.log('amqplib: 0 passed, 1 failed');
  process.exit(1);
});
