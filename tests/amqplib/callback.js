// Node amqplib's callback API against a broker: every connection, channel and confirm-channel operation, each as a
// named step with a 5 s limit, so an operation that never answers fails its step instead of hanging the run.
// Usage: node callback.js amqp://guest:guest@127.0.0.1:5672
// Prints one line per step, then "amqplib callback: N passed, M failed"; exits 1 when any step failed.
// Every expected value (reply codes and texts, counts, server properties) is RabbitMQ 3.10.8's answer.
'use strict';
const amqp = require('amqplib/callback_api');
const assert = require('node:assert/strict');

const url = process.argv[2] || 'amqp://guest:guest@127.0.0.1:5672';
const STEP_TIMEOUT_MS = 5000;
// Long enough for a broker to deliver all it will deliver to a consumer under a prefetch limit.
const SETTLE_MS = 300;
const RUN = Math.random().toString(36).slice(2, 8);

// The keys of RabbitMQ 3.10.8's connection.start server-properties, and the capabilities amqplib and its users rely on.
const SERVER_PROPERTY_KEYS = ['capabilities', 'cluster_name', 'copyright', 'information', 'platform', 'product', 'version'];
const CAPABILITIES = [
  'publisher_confirms',
  'exchange_exchange_bindings',
  'basic.nack',
  'consumer_cancel_notify',
  'connection.blocked',
  'authentication_failure_close',
  'per_consumer_qos',
];

// ------------------------------------------------------------------ steps and their runner

const steps = [];
let passed = 0;
let failed = 0;

function step(name, fn) {
  steps.push({ name, fn });
}

// Runs the steps one after another. A step gets `t`: t.done() or t.fail(err) ends it; t.ok(fn) makes a node-style
// callback that fails the step on an error and runs fn(value) otherwise; t.guard(fn) wraps any other callback. An
// exception in fn fails the step; anything arriving after the step ended is ignored.
function runStep(index) {
  if (index === steps.length) {
    finish();
    return;
  }
  const { name, fn } = steps[index];
  let settled = false;
  const settle = (err) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    if (err) {
      failed++;
      console.log(`FAIL ${name}: ${err && err.message ? err.message : err}`);
    } else {
      passed++;
      console.log(`ok   ${name}`);
    }
    setImmediate(() => runStep(index + 1));
  };
  const timer = setTimeout(() => settle(new Error(`no answer within ${STEP_TIMEOUT_MS / 1000} s`)), STEP_TIMEOUT_MS);
  const guard =
    (f) =>
    (...args) => {
      if (settled) return;
      try {
        f(...args);
      } catch (e) {
        settle(e);
      }
    };
  const t = {
    done: () => settle(null),
    fail: (e) => settle(e),
    guard,
    ok: (f) =>
      guard((err, value) => {
        if (err) throw err;
        f(value);
      }),
    // after ms, runs f (guarded)
    later: (ms, f) => setTimeout(guard(f), ms),
  };
  try {
    fn(t);
  } catch (e) {
    settle(e);
  }
}

let mainConnection;

function finish() {
  console.log(`amqplib callback: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

process.on('uncaughtException', (e) => {
  console.log(`FAIL uncaught: ${e && e.stack ? e.stack : e}`);
  console.log(`amqplib callback: ${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});

// ------------------------------------------------------------------ helpers

// The reply text of a close, from amqplib's error message: `... with message "TEXT"`.
function replyText(err) {
  const match = /with message "(.*)"$/s.exec(err.message);
  return match ? match[1] : err.message;
}

// Opens a channel of the kind ('channel' or 'confirm') that records the 'error' events it gets.
function openChannel(conn, kind, cb) {
  const create = kind === 'confirm' ? conn.createConfirmChannel.bind(conn) : conn.createChannel.bind(conn);
  create((err, ch) => {
    if (err) return cb(err);
    ch.errors = [];
    ch.on('error', (e) => ch.errors.push(e));
    cb(null, ch);
  });
}

// Publishes on ctx.ch; on a confirm channel with a callback that counts the confirm.
function publish(ctx, exchange, routingKey, body, options) {
  const content = Buffer.from(body);
  if (ctx.kind === 'confirm') {
    ctx.published++;
    return ctx.ch.publish(exchange, routingKey, content, options || {}, (err) => {
      if (err) ctx.nacked.push(err);
      else ctx.acked++;
    });
  }
  return ctx.ch.publish(exchange, routingKey, content, options || {});
}

function sendToQueue(ctx, queue, body, options) {
  const content = Buffer.from(body);
  if (ctx.kind === 'confirm') {
    ctx.published++;
    return ctx.ch.sendToQueue(queue, content, options || {}, (err) => {
      if (err) ctx.nacked.push(err);
      else ctx.acked++;
    });
  }
  return ctx.ch.sendToQueue(queue, content, options || {});
}

// On a confirm channel waits for every confirm (so a channel error closes no channel with publishes outstanding).
function confirmed(ctx, t, then) {
  if (ctx.kind !== 'confirm') return then();
  ctx.ch.waitForConfirms(
    t.guard((err) => {
      if (err) throw err;
      assert.equal(ctx.nacked.length, 0, 'nacked publishes');
      assert.equal(ctx.acked, ctx.published, 'every publish confirmed');
      then();
    }),
  );
}

// Runs op(ch, cb) that must fail: its callback gets the error, the channel gets an 'error' event and a 'close', each
// with the reply code and text and the failing method's ids; then ctx.ch is replaced by a new channel of its kind on
// the same connection, which must answer, and then() runs (by default the step is done). method is amqplib's name of
// the failing method; a publish has no callback, so for 'BasicPublish' op(ch) only publishes.
const METHOD_IDS = {
  QueueDeclare: [50, 10],
  QueueDelete: [50, 40],
  ExchangeDeclare: [40, 10],
  ExchangeDelete: [40, 20],
  BasicConsume: [60, 20],
  BasicPublish: [60, 40],
};
function expectChannelError(t, ctx, op, method, code, codeName, text, then) {
  confirmed(ctx, t, () => {
    const ch = ctx.ch;
    const hasCallback = method !== 'BasicPublish';
    let opError = hasCallback ? undefined : true;
    let eventError;
    let closed = false;
    // the channel is replaced before the checks, so a failed check leaves the next step a working channel
    const check = () => {
      if (!opError || !eventError || !closed) return;
      openChannel(
        ctx.conn,
        ctx.kind,
        t.ok((fresh) => {
          ctx.ch = fresh;
          ctx.published = 0;
          ctx.acked = 0;
          ctx.nacked = [];
          if (hasCallback) {
            assert.equal(opError.code, code, `callback error code (${opError.message})`);
            assert.equal(
              opError.message,
              `Operation failed: ${method}; ${code} (${codeName}) with message "${text}"`,
              'callback error names the failing method and the reply text',
            );
          }
          assert.equal(eventError.code, code, `error event code (${eventError.message})`);
          assert.equal(replyText(eventError), text, 'error event reply text');
          assert.deepEqual([eventError.classId, eventError.methodId], METHOD_IDS[method], 'failing method ids');
          fresh.checkExchange(
            'amq.direct',
            t.ok(() => (then ? then() : t.done())),
          );
        }),
      );
    };
    ch.once(
      'error',
      t.guard((e) => {
        eventError = e;
        check();
      }),
    );
    ch.once(
      'close',
      t.guard(() => {
        closed = true;
        check();
      }),
    );
    op(
      ch,
      t.guard((err) => {
        assert.ok(err, `${method} must fail with ${code}`);
        opError = err;
        check();
      }),
    );
  });
}

// Calls then() once cond() holds, checking every 10 ms (the step's limit ends a wait that never holds).
function waitUntil(t, cond, then) {
  const poll = t.guard(() => {
    if (cond()) then();
    else setTimeout(poll, 10);
  });
  poll();
}

// Gets count messages (acks left to the caller), in order.
function getMany(t, ch, queue, count, then, got = []) {
  if (got.length === count) return then(got);
  ch.get(
    queue,
    { noAck: false },
    t.ok((msg) => {
      assert.ok(msg, `message ${got.length + 1} of ${count} in ${queue}`);
      got.push(msg);
      getMany(t, ch, queue, count, then, got);
    }),
  );
}

function bodies(messages) {
  return messages.map((m) => m.content.toString());
}

// After a recover (which puts every unacknowledged message back), a get finds the queue empty: nothing came back.
function nothingBack(t, ch, queue, then) {
  ch.recover(
    t.ok(() => {
      ch.get(
        queue,
        { noAck: true },
        t.ok((msg) => {
          assert.equal(msg, false, `nothing came back to ${queue}${msg ? `: ${msg.content}` : ''}`);
          then();
        }),
      );
    }),
  );
}

// Polls checkQueue until it counts expected messages, for at most 2 s. RabbitMQ's queue answers a passive declare
// ahead of the deliveries and requeues still in its mailbox, so a count right after a publish or a requeue may lag.
function countReaches(t, ch, queue, expected, then, deadline = Date.now() + 2000) {
  ch.checkQueue(
    queue,
    t.ok((ok) => {
      if (ok.messageCount === expected) return then(ok);
      assert.ok(Date.now() < deadline, `${queue} counts ${ok.messageCount} messages, expected ${expected}`);
      setTimeout(t.guard(() => countReaches(t, ch, queue, expected, then, deadline)), 20);
    }),
  );
}

// ------------------------------------------------------------------ connections

step('connect: the callback gets a connection', (t) => {
  amqp.connect(
    url,
    t.ok((conn) => {
      assert.equal(typeof conn.createChannel, 'function');
      conn.on('error', () => {});
      mainConnection = conn;
      t.done();
    }),
  );
});

step('connect: serverProperties as RabbitMQ sends them', (t) => {
  const props = mainConnection.connection.serverProperties;
  assert.deepEqual(Object.keys(props).sort(), SERVER_PROPERTY_KEYS, 'server property keys');
  assert.equal(props.version, '3.10.8', 'version');
  for (const key of ['product', 'platform', 'cluster_name', 'copyright', 'information']) {
    assert.equal(typeof props[key], 'string', key);
    assert.ok(props[key].length > 0, `${key} is not empty`);
  }
  for (const capability of CAPABILITIES) {
    assert.equal(props.capabilities[capability], true, `capability ${capability}`);
  }
  t.done();
});

step('connection.createChannel on the first connection', (t) => {
  openChannel(
    mainConnection,
    'channel',
    t.ok((ch) => {
      assert.equal(typeof ch.ch, 'number');
      mainConnection.firstChannel = ch;
      ch.assertQueue(
        '',
        { exclusive: true },
        t.ok((ok) => {
          mainConnection.firstQueue = ok.queue;
          t.done();
        }),
      );
    }),
  );
});

step('connection.updateSecret: answered with update-secret-ok, the connection goes on', (t) => {
  let event = false;
  mainConnection.once('update-secret-ok', () => {
    event = true;
  });
  mainConnection.updateSecret(
    Buffer.from('guest'),
    'token refresh',
    t.guard(() => {
      assert.ok(event, "the connection emitted 'update-secret-ok'");
      mainConnection.firstChannel.checkQueue(
        mainConnection.firstQueue,
        t.ok((ok) => {
          assert.equal(ok.queue, mainConnection.firstQueue);
          assert.equal(ok.messageCount, 0);
          t.done();
        }),
      );
    }),
  );
});

step('connection.close: the first connection closes', (t) => {
  let closeEvent = false;
  mainConnection.once('close', (err) => {
    closeEvent = err === undefined ? true : err;
  });
  mainConnection.close(
    t.guard((err) => {
      assert.ok(!err, `close callback error: ${err}`);
      waitUntil(
        t,
        () => closeEvent !== false,
        () => {
          assert.equal(closeEvent, true, "'close' event without an error");
          t.done();
        },
      );
    }),
  );
});

step('connect a second time, after the first closed', (t) => {
  amqp.connect(
    url,
    t.ok((conn) => {
      conn.on('error', () => {});
      mainConnection = conn;
      openChannel(
        conn,
        'channel',
        t.ok((ch) => {
          ch.checkExchange(
            'amq.topic',
            t.ok(() => {
              ch.close(t.ok(() => t.done()));
            }),
          );
        }),
      );
    }),
  );
});

step('four connections open at once, each with a channel and its own queue', (t) => {
  const COUNT = 4;
  const results = [];
  for (let i = 0; i < COUNT; i++) {
    amqp.connect(
      url,
      t.ok((conn) => {
        conn.on('error', () => {});
        openChannel(
          conn,
          'channel',
          t.ok((ch) => {
            ch.assertQueue(
              '',
              { exclusive: true },
              t.ok((ok) => {
                ch.sendToQueue(ok.queue, Buffer.from(`from connection ${i}`));
                ch.get(
                  ok.queue,
                  { noAck: true },
                  t.ok((msg) => {
                    assert.ok(msg, `connection ${i} got its message`);
                    results.push({ i, body: msg.content.toString(), conn });
                    if (results.length === COUNT) closeAll();
                  }),
                );
              }),
            );
          }),
        );
      }),
    );
  }
  const closeAll = () => {
    for (const r of results) assert.equal(r.body, `from connection ${r.i}`);
    let closed = 0;
    for (const r of results) {
      r.conn.close(
        t.ok(() => {
          if (++closed === COUNT) t.done();
        }),
      );
    }
  };
});

// ------------------------------------------------------------------ a channel's operations, on both kinds

function channelSteps(kind) {
  const ctx = { kind, conn: null, ch: null, published: 0, acked: 0, nacked: [] };
  const n = (name) => `cb-${RUN}-${kind}-${name}`;
  const s = (name, fn) => step(`${kind}: ${name}`, fn);
  const create = kind === 'confirm' ? 'createConfirmChannel' : 'createChannel';

  s(`connection.${create}`, (t) => {
    ctx.conn = mainConnection;
    openChannel(
      ctx.conn,
      kind,
      t.ok((ch) => {
        assert.equal(typeof ch.ch, 'number');
        assert.equal(typeof ch.waitForConfirms, kind === 'confirm' ? 'function' : 'undefined');
        ctx.ch = ch;
        t.done();
      }),
    );
  });

  // ---- queues

  s('assertQueue server-named', (t) => {
    ctx.ch.assertQueue(
      '',
      { exclusive: true },
      t.ok((ok) => {
        assert.match(ok.queue, /^amq\.gen-/);
        assert.equal(ok.messageCount, 0);
        assert.equal(ok.consumerCount, 0);
        ctx.anonymous = ok.queue;
        t.done();
      }),
    );
  });

  s('assertQueue named, and again alike', (t) => {
    ctx.ch.assertQueue(
      n('q'),
      { durable: false },
      t.ok((ok) => {
        assert.deepEqual(ok, { queue: n('q'), messageCount: 0, consumerCount: 0 });
        ctx.ch.assertQueue(
          n('q'),
          { durable: false },
          t.ok((again) => {
            assert.deepEqual(again, { queue: n('q'), messageCount: 0, consumerCount: 0 });
            t.done();
          }),
        );
      }),
    );
  });

  s('assertQueue with arguments, and again alike', (t) => {
    const options = { durable: false, maxLength: 10, messageTtl: 60000, arguments: { 'x-queue-mode': 'lazy' } };
    ctx.ch.assertQueue(
      n('args'),
      options,
      t.ok((ok) => {
        assert.deepEqual(ok, { queue: n('args'), messageCount: 0, consumerCount: 0 });
        ctx.ch.assertQueue(
          n('args'),
          options,
          t.ok((again) => {
            assert.equal(again.queue, n('args'));
            t.done();
          }),
        );
      }),
    );
  });

  s('assertQueue inequivalent: 406 as an error event, a new channel works', (t) => {
    expectChannelError(
      t,
      ctx,
      (ch, cb) =>
        ch.assertQueue(n('args'), { durable: false, maxLength: 20, messageTtl: 60000, arguments: { 'x-queue-mode': 'lazy' } }, cb),
      'QueueDeclare',
      406,
      'PRECONDITION-FAILED',
      `PRECONDITION_FAILED - inequivalent arg 'x-max-length' for queue '${n('args')}' in vhost '/': ` +
        "received '20' but current is '10'",
    );
  });

  s('checkQueue of an existing queue counts its messages', (t) => {
    sendToQueue(ctx, n('q'), 'one');
    sendToQueue(ctx, n('q'), 'two');
    countReaches(t, ctx.ch, n('q'), 2, (ok) => {
      assert.deepEqual(ok, { queue: n('q'), messageCount: 2, consumerCount: 0 });
      t.done();
    });
  });

  s('checkQueue of a missing queue: 404 as an error event, a new channel works', (t) => {
    expectChannelError(
      t,
      ctx,
      (ch, cb) => ch.checkQueue(n('missing'), cb),
      'QueueDeclare',
      404,
      'NOT-FOUND',
      `NOT_FOUND - no queue '${n('missing')}' in vhost '/'`,
    );
  });

  s('deleteQueue of a missing queue answers 0 messages', (t) => {
    ctx.ch.deleteQueue(
      n('never'),
      {},
      t.ok((ok) => {
        assert.deepEqual(ok, { messageCount: 0 });
        t.done();
      }),
    );
  });

  s('deleteQueue ifEmpty of a queue holding messages: 406 not empty', (t) => {
    expectChannelError(
      t,
      ctx,
      (ch, cb) => ch.deleteQueue(n('q'), { ifEmpty: true }, cb),
      'QueueDelete',
      406,
      'PRECONDITION-FAILED',
      `PRECONDITION_FAILED - queue '${n('q')}' in vhost '/' not empty`,
    );
  });

  s('deleteQueue ifUnused of a queue with a consumer: 406 in use', (t) => {
    openChannel(
      ctx.conn,
      'channel',
      t.ok((other) => {
        other.consume(
          n('args'),
          () => {},
          {},
          t.ok(() => {
            expectChannelError(
              t,
              ctx,
              (ch, cb) =>
                ch.deleteQueue(
                  n('args'),
                  { ifUnused: true },
                  t.guard((err) => {
                    other.close(t.guard(() => cb(err)));
                  }),
                ),
              'QueueDelete',
              406,
              'PRECONDITION-FAILED',
              `PRECONDITION_FAILED - queue '${n('args')}' in vhost '/' in use`,
            );
          }),
        );
      }),
    );
  });

  s('deleteQueue ifUnused and ifEmpty of a queue with a consumer and ready messages: 406 not empty first', (t) => {
    ctx.ch.assertQueue(
      n('cond'),
      { durable: false },
      t.ok(() => {
        sendToQueue(ctx, n('cond'), 'held');
        sendToQueue(ctx, n('cond'), 'ready');
        openChannel(
          ctx.conn,
          'channel',
          t.ok((other) => {
            const got = [];
            other.prefetch(
              1,
              false,
              t.ok(() => {
                other.consume(
                  n('cond'),
                  (msg) => got.push(msg),
                  {},
                  t.ok(() => {
                    waitUntil(
                      t,
                      () => got.length === 1,
                      () => {
                        expectChannelError(
                          t,
                          ctx,
                          (ch, cb) => ch.deleteQueue(n('cond'), { ifUnused: true, ifEmpty: true }, cb),
                          'QueueDelete',
                          406,
                          'PRECONDITION-FAILED',
                          `PRECONDITION_FAILED - queue '${n('cond')}' in vhost '/' not empty`,
                          () => other.close(t.ok(() => t.done())),
                        );
                      },
                    );
                  }),
                );
              }),
            );
          }),
        );
      }),
    );
  });

  s('deleteQueue ifEmpty of a queue whose messages are all unacknowledged answers 0', (t) => {
    openChannel(
      ctx.conn,
      'channel',
      t.ok((other) => {
        getMany(t, other, n('cond'), 2, (got) => {
          assert.deepEqual(bodies(got).sort(), ['held', 'ready']);
          ctx.ch.deleteQueue(
            n('cond'),
            { ifEmpty: true },
            t.ok((ok) => {
              assert.deepEqual(ok, { messageCount: 0 });
              other.close(t.ok(() => t.done()));
            }),
          );
        });
      }),
    );
  });

  s('deleteQueue ifUnused and ifEmpty of an unused empty queue answers its count', (t) => {
    ctx.ch.deleteQueue(
      n('args'),
      { ifUnused: true, ifEmpty: true },
      t.ok((ok) => {
        assert.deepEqual(ok, { messageCount: 0 });
        t.done();
      }),
    );
  });

  s('purgeQueue answers the messages purged', (t) => {
    ctx.ch.purgeQueue(
      n('q'),
      t.ok((ok) => {
        assert.deepEqual(ok, { messageCount: 2 });
        ctx.ch.checkQueue(
          n('q'),
          t.ok((after) => {
            assert.equal(after.messageCount, 0);
            t.done();
          }),
        );
      }),
    );
  });

  // ---- exchanges and bindings

  s('assertExchange and checkExchange', (t) => {
    ctx.ch.assertExchange(
      n('x'),
      'direct',
      { durable: false },
      t.ok((ok) => {
        assert.deepEqual(ok, { exchange: n('x') });
        ctx.ch.checkExchange(
          n('x'),
          t.ok((checked) => {
            assert.deepEqual(checked, {});
            t.done();
          }),
        );
      }),
    );
  });

  s('assertExchange of another type: 406 inequivalent type', (t) => {
    expectChannelError(
      t,
      ctx,
      (ch, cb) => ch.assertExchange(n('x'), 'topic', { durable: false }, cb),
      'ExchangeDeclare',
      406,
      'PRECONDITION-FAILED',
      `PRECONDITION_FAILED - inequivalent arg 'type' for exchange '${n('x')}' in vhost '/': ` +
        "received 'topic' but current is 'direct'",
    );
  });

  s('checkExchange of a missing exchange: 404', (t) => {
    expectChannelError(
      t,
      ctx,
      (ch, cb) => ch.checkExchange(n('nox'), cb),
      'ExchangeDeclare',
      404,
      'NOT-FOUND',
      `NOT_FOUND - no exchange '${n('nox')}' in vhost '/'`,
    );
  });

  s('bindQueue: a publish reaches the queue through the binding', (t) => {
    ctx.ch.bindQueue(
      n('q'),
      n('x'),
      'rk',
      {},
      t.ok((ok) => {
        assert.deepEqual(ok, {});
        publish(ctx, n('x'), 'rk', 'via the binding');
        ctx.ch.get(
          n('q'),
          { noAck: true },
          t.ok((msg) => {
            assert.ok(msg, 'a message');
            assert.equal(msg.content.toString(), 'via the binding');
            assert.equal(msg.fields.exchange, n('x'));
            assert.equal(msg.fields.routingKey, 'rk');
            t.done();
          }),
        );
      }),
    );
  });

  s('unbindQueue: no longer routed; unbinding it again and from a missing exchange succeed', (t) => {
    ctx.ch.unbindQueue(
      n('q'),
      n('x'),
      'rk',
      {},
      t.ok((ok) => {
        assert.deepEqual(ok, {});
        publish(ctx, n('x'), 'rk', 'nowhere');
        ctx.ch.get(
          n('q'),
          {},
          t.ok((msg) => {
            assert.equal(msg, false, 'nothing routed after the unbind');
            ctx.ch.unbindQueue(
              n('q'),
              n('x'),
              'rk',
              {},
              t.ok(() => {
                ctx.ch.unbindQueue(n('q'), n('nox'), 'rk', {}, t.ok(() => t.done()));
              }),
            );
          }),
        );
      }),
    );
  });

  s('bindExchange: a publish reaches the queue through an exchange-to-exchange binding', (t) => {
    ctx.ch.assertExchange(
      n('x2'),
      'fanout',
      { durable: false },
      t.ok(() => {
        ctx.ch.bindExchange(
          n('x2'),
          n('x'),
          'e2e',
          {},
          t.ok((ok) => {
            assert.deepEqual(ok, {});
            ctx.ch.bindQueue(
              n('q'),
              n('x2'),
              '',
              {},
              t.ok(() => {
                publish(ctx, n('x'), 'e2e', 'through two exchanges');
                ctx.ch.get(
                  n('q'),
                  { noAck: true },
                  t.ok((msg) => {
                    assert.ok(msg, 'a message');
                    assert.equal(msg.content.toString(), 'through two exchanges');
                    assert.equal(msg.fields.exchange, n('x'));
                    t.done();
                  }),
                );
              }),
            );
          }),
        );
      }),
    );
  });

  s('unbindExchange: no longer routed; unbinding it again succeeds', (t) => {
    ctx.ch.unbindExchange(
      n('x2'),
      n('x'),
      'e2e',
      {},
      t.ok((ok) => {
        assert.deepEqual(ok, {});
        publish(ctx, n('x'), 'e2e', 'nowhere');
        ctx.ch.get(
          n('q'),
          {},
          t.ok((msg) => {
            assert.equal(msg, false, 'nothing routed after the unbind');
            ctx.ch.unbindExchange(n('x2'), n('x'), 'e2e', {}, t.ok(() => t.done()));
          }),
        );
      }),
    );
  });

  s('deleteExchange ifUnused of an exchange with a binding: 406 in use', (t) => {
    expectChannelError(
      t,
      ctx,
      (ch, cb) => ch.deleteExchange(n('x2'), { ifUnused: true }, cb),
      'ExchangeDelete',
      406,
      'PRECONDITION-FAILED',
      `PRECONDITION_FAILED - exchange '${n('x2')}' in vhost '/' in use`,
    );
  });

  s('deleteExchange ifUnused of an exchange that is only a destination succeeds', (t) => {
    // x2 is the destination of x's binding, and the source of none
    ctx.ch.unbindQueue(
      n('q'),
      n('x2'),
      '',
      {},
      t.ok(() => {
        ctx.ch.bindExchange(
          n('x2'),
          n('x'),
          'e2e',
          {},
          t.ok(() => {
            ctx.ch.deleteExchange(
              n('x2'),
              { ifUnused: true },
              t.ok((ok) => {
                assert.deepEqual(ok, {});
                t.done();
              }),
            );
          }),
        );
      }),
    );
  });

  s('deleteExchange, then the name is free; a missing exchange deletes fine', (t) => {
    ctx.ch.deleteExchange(
      n('x'),
      {},
      t.ok((ok) => {
        assert.deepEqual(ok, {});
        ctx.ch.assertExchange(
          n('x'),
          'topic',
          { durable: false },
          t.ok(() => {
            ctx.ch.deleteExchange(
              n('x'),
              { ifUnused: true },
              t.ok(() => {
                ctx.ch.deleteExchange(n('nox'), {}, t.ok(() => t.done()));
              }),
            );
          }),
        );
      }),
    );
  });

  // ---- publishing

  s('publish with every message option, CC and BCC: a consumer gets them all', (t) => {
    const headers = { greeting: 'hello', count: 7, nested: { a: 1 } };
    const options = {
      contentType: 'text/plain',
      contentEncoding: 'utf-8',
      headers,
      deliveryMode: 2,
      priority: 3,
      correlationId: 'corr-1',
      replyTo: 'reply.queue',
      expiration: '60000',
      messageId: 'msg-1',
      timestamp: 1700000000,
      type: 'cb.type',
      userId: 'guest',
      appId: 'cb-app',
      CC: [n('cc')],
      BCC: n('bcc'),
    };
    ctx.ch.assertQueue(
      n('props'),
      { durable: false },
      t.ok(() => {
        ctx.ch.assertQueue(
          n('cc'),
          { durable: false },
          t.ok(() => {
            ctx.ch.assertQueue(
              n('bcc'),
              { durable: false },
              t.ok(() => {
                ctx.ch.consume(
                  n('props'),
                  t.guard((msg) => {
                    assert.equal(msg.content.toString(), 'every option');
                    const p = msg.properties;
                    assert.equal(p.contentType, 'text/plain');
                    assert.equal(p.contentEncoding, 'utf-8');
                    assert.deepEqual(p.headers, { ...headers, CC: [n('cc')] }, 'headers: CC kept, BCC removed');
                    assert.equal(p.deliveryMode, 2);
                    assert.equal(p.priority, 3);
                    assert.equal(p.correlationId, 'corr-1');
                    assert.equal(p.replyTo, 'reply.queue');
                    assert.equal(p.expiration, '60000');
                    assert.equal(p.messageId, 'msg-1');
                    assert.equal(p.timestamp, 1700000000);
                    assert.equal(p.type, 'cb.type');
                    assert.equal(p.userId, 'guest');
                    assert.equal(p.appId, 'cb-app');
                    assert.equal(p.clusterId, undefined);
                    assert.equal(msg.fields.exchange, '');
                    assert.equal(msg.fields.routingKey, n('props'));
                    assert.equal(msg.fields.redelivered, false);
                    ctx.ch.cancel(msg.fields.consumerTag, t.ok(() => copies()));
                  }),
                  { noAck: true },
                  t.ok(() => publish(ctx, '', n('props'), 'every option', options)),
                );
              }),
            );
          }),
        );
      }),
    );
    const copies = () => {
      ctx.ch.get(
        n('cc'),
        { noAck: true },
        t.ok((cc) => {
          assert.ok(cc, 'a copy in the CC queue');
          assert.equal(cc.content.toString(), 'every option');
          assert.equal(cc.fields.routingKey, n('props'));
          assert.deepEqual(cc.properties.headers.CC, [n('cc')]);
          ctx.ch.get(
            n('bcc'),
            { noAck: true },
            t.ok((bcc) => {
              assert.ok(bcc, 'a copy in the BCC queue');
              assert.equal(bcc.content.toString(), 'every option');
              assert.equal(bcc.properties.headers.BCC, undefined, 'no BCC header');
              assert.equal(bcc.properties.messageId, 'msg-1');
              t.done();
            }),
          );
        }),
      );
    };
  });

  s('publish with a userId that is not the connection user: 406', (t) => {
    expectChannelError(
      t,
      ctx,
      () => publish(ctx, '', n('props'), 'spoofed', { userId: 'someone-else' }),
      'BasicPublish',
      406,
      'PRECONDITION-FAILED',
      "PRECONDITION_FAILED - user_id property set to 'someone-else' but authenticated user was 'guest'",
    );
  });

  s('sendToQueue with persistent: the message and its delivery mode arrive', (t) => {
    sendToQueue(ctx, n('q'), 'straight to the queue', { persistent: true, headers: { k: 'v' } });
    ctx.ch.get(
      n('q'),
      { noAck: true },
      t.ok((msg) => {
        assert.ok(msg, 'a message');
        assert.equal(msg.content.toString(), 'straight to the queue');
        assert.equal(msg.properties.deliveryMode, 2);
        assert.deepEqual(msg.properties.headers, { k: 'v' });
        assert.equal(msg.fields.exchange, '');
        assert.equal(msg.fields.routingKey, n('q'));
        assert.equal(msg.fields.messageCount, 0);
        t.done();
      }),
    );
  });

  s("publish mandatory with no route: the 'return' event gets the message", (t) => {
    ctx.ch.once(
      'return',
      t.guard((msg) => {
        assert.equal(msg.content.toString(), 'unroutable');
        assert.equal(msg.fields.replyCode, 312);
        assert.equal(msg.fields.replyText, 'NO_ROUTE');
        assert.equal(msg.fields.exchange, 'amq.direct');
        assert.equal(msg.fields.routingKey, 'nobody-bound');
        assert.equal(msg.properties.messageId, 'ret-1');
        confirmed(ctx, t, () => t.done());
      }),
    );
    publish(ctx, 'amq.direct', 'nobody-bound', 'unroutable', { mandatory: true, messageId: 'ret-1' });
  });

  s('publish to a missing exchange: 404 as an error event', (t) => {
    expectChannelError(
      t,
      ctx,
      () => publish(ctx, n('nox'), 'rk', 'lost'),
      'BasicPublish',
      404,
      'NOT-FOUND',
      `NOT_FOUND - no exchange '${n('nox')}' in vhost '/'`,
    );
  });

  // ---- consumers

  s('consume noAck with a consumerTag, then cancel: deliveries stop', (t) => {
    const got = [];
    ctx.ch.consume(
      n('q'),
      (msg) => got.push(msg),
      { noAck: true, consumerTag: n('tag') },
      t.ok((ok) => {
        assert.deepEqual(ok, { consumerTag: n('tag') });
        sendToQueue(ctx, n('q'), 'c1');
        sendToQueue(ctx, n('q'), 'c2');
        waitUntil(
          t,
          () => got.length === 2,
          () => {
            assert.deepEqual(bodies(got), ['c1', 'c2']);
            assert.ok(got.every((m) => m.fields.consumerTag === n('tag')));
            assert.ok(got[1].fields.deliveryTag > got[0].fields.deliveryTag, 'delivery tags increase');
            ctx.ch.checkQueue(
              n('q'),
              t.ok((during) => {
                assert.equal(during.consumerCount, 1);
                ctx.ch.cancel(
                  n('tag'),
                  t.ok((cancelled) => {
                    assert.deepEqual(cancelled, { consumerTag: n('tag') });
                    sendToQueue(ctx, n('q'), 'after cancel');
                    countReaches(t, ctx.ch, n('q'), 1, (after) => {
                      assert.deepEqual(after, { queue: n('q'), messageCount: 1, consumerCount: 0 });
                      assert.equal(got.length, 2, 'nothing delivered after cancel');
                      ctx.ch.purgeQueue(n('q'), t.ok(() => t.done()));
                    });
                  }),
                );
              }),
            );
          },
        );
      }),
    );
  });

  s('consume exclusive: a second consumer is refused with 403', (t) => {
    ctx.ch.consume(
      n('q'),
      () => {},
      { exclusive: true },
      t.ok((ok) => {
        assert.match(ok.consumerTag, /^amq\.ctag-/);
        const owner = ctx.ch;
        const second = { ...ctx, kind: 'channel' };
        openChannel(
          ctx.conn,
          'channel',
          t.ok((other) => {
            second.ch = other;
            expectChannelError(
              t,
              second,
              (ch, cb) => ch.consume(n('q'), () => {}, {}, cb),
              'BasicConsume',
              403,
              'ACCESS-REFUSED',
              `ACCESS_REFUSED - queue '${n('q')}' in vhost '/' in exclusive use`,
              () => {
                // the owner keeps its consumer until it cancels it
                second.ch.close(
                  t.ok(() => {
                    owner.cancel(
                      ok.consumerTag,
                      t.ok((cancelled) => {
                        assert.deepEqual(cancelled, { consumerTag: ok.consumerTag });
                        t.done();
                      }),
                    );
                  }),
                );
              },
            );
          }),
        );
      }),
    );
  });

  s('consume with arguments (x-priority) and ack', (t) => {
    ctx.ch.consume(
      n('q'),
      t.guard((msg) => {
        assert.equal(msg.content.toString(), 'with arguments');
        ctx.ch.ack(msg);
        ctx.ch.cancel(
          msg.fields.consumerTag,
          t.ok(() => {
            nothingBack(t, ctx.ch, n('q'), () => t.done());
          }),
        );
      }),
      { arguments: { 'x-priority': 5 } },
      t.ok(() => sendToQueue(ctx, n('q'), 'with arguments')),
    );
  });

  s('consume from a missing queue: 404', (t) => {
    expectChannelError(
      t,
      ctx,
      (ch, cb) => ch.consume(n('missing'), () => {}, {}, cb),
      'BasicConsume',
      404,
      'NOT-FOUND',
      `NOT_FOUND - no queue '${n('missing')}' in vhost '/'`,
    );
  });

  s('get from an empty queue answers false', (t) => {
    ctx.ch.get(
      n('q'),
      {},
      t.ok((msg) => {
        assert.equal(msg, false);
        t.done();
      }),
    );
  });

  s('get answers the first message and the count left', (t) => {
    for (const body of ['g1', 'g2', 'g3']) sendToQueue(ctx, n('q'), body, { messageId: body });
    ctx.ch.get(
      n('q'),
      { noAck: true },
      t.ok((msg) => {
        assert.ok(msg, 'a message');
        assert.equal(msg.content.toString(), 'g1');
        assert.equal(msg.properties.messageId, 'g1');
        assert.equal(msg.fields.messageCount, 2);
        assert.equal(msg.fields.redelivered, false);
        assert.equal(msg.fields.exchange, '');
        assert.equal(msg.fields.routingKey, n('q'));
        ctx.ch.purgeQueue(
          n('q'),
          t.ok((ok) => {
            assert.equal(ok.messageCount, 2);
            t.done();
          }),
        );
      }),
    );
  });

  // ---- settling

  s('recover: an unacknowledged message comes back redelivered', (t) => {
    sendToQueue(ctx, n('q'), 'r1');
    ctx.ch.get(
      n('q'),
      {},
      t.ok((msg) => {
        assert.equal(msg.fields.redelivered, false);
        ctx.ch.checkQueue(
          n('q'),
          t.ok((held) => {
            assert.equal(held.messageCount, 0, 'held unacknowledged');
            ctx.ch.recover(
              t.ok((ok) => {
                assert.deepEqual(ok, {});
                ctx.ch.get(
                  n('q'),
                  {},
                  t.ok((again) => {
                    assert.ok(again, 'back in the queue');
                    assert.equal(again.content.toString(), 'r1');
                    assert.equal(again.fields.redelivered, true);
                    ctx.ch.ack(again);
                    nothingBack(t, ctx.ch, n('q'), () => t.done());
                  }),
                );
              }),
            );
          }),
        );
      }),
    );
  });

  s('ack one, then ack allUpTo: nothing comes back', (t) => {
    for (const body of ['a1', 'a2', 'a3']) sendToQueue(ctx, n('q'), body);
    getMany(t, ctx.ch, n('q'), 3, (got) => {
      assert.deepEqual(bodies(got), ['a1', 'a2', 'a3']);
      ctx.ch.ack(got[0]);
      ctx.ch.ack(got[2], true);
      nothingBack(t, ctx.ch, n('q'), () => t.done());
    });
  });

  s('ackAll: nothing comes back', (t) => {
    for (const body of ['b1', 'b2']) sendToQueue(ctx, n('q'), body);
    getMany(t, ctx.ch, n('q'), 2, (got) => {
      assert.deepEqual(bodies(got), ['b1', 'b2']);
      ctx.ch.ackAll();
      nothingBack(t, ctx.ch, n('q'), () => t.done());
    });
  });

  s('nack with requeue puts it back redelivered; nack without requeue drops it', (t) => {
    sendToQueue(ctx, n('q'), 'n1');
    getMany(t, ctx.ch, n('q'), 1, ([msg]) => {
      ctx.ch.nack(msg);
      countReaches(t, ctx.ch, n('q'), 1, () => {
        getMany(t, ctx.ch, n('q'), 1, ([again]) => {
          assert.equal(again.content.toString(), 'n1');
          assert.equal(again.fields.redelivered, true);
          ctx.ch.nack(again, false, false);
          nothingBack(t, ctx.ch, n('q'), () => t.done());
        });
      });
    });
  });

  s('nack allUpTo with requeue puts all back in order', (t) => {
    for (const body of ['m1', 'm2', 'm3']) sendToQueue(ctx, n('q'), body);
    getMany(t, ctx.ch, n('q'), 3, (got) => {
      ctx.ch.nack(got[2], true, true);
      countReaches(t, ctx.ch, n('q'), 3, () => {
        getMany(t, ctx.ch, n('q'), 3, (again) => {
          assert.deepEqual(bodies(again), ['m1', 'm2', 'm3']);
          assert.ok(again.every((m) => m.fields.redelivered));
          ctx.ch.ackAll();
          nothingBack(t, ctx.ch, n('q'), () => t.done());
        });
      });
    });
  });

  s('nackAll with requeue puts all back; nackAll without requeue drops all', (t) => {
    for (const body of ['k1', 'k2']) sendToQueue(ctx, n('q'), body);
    getMany(t, ctx.ch, n('q'), 2, () => {
      ctx.ch.nackAll();
      countReaches(t, ctx.ch, n('q'), 2, () => {
        getMany(t, ctx.ch, n('q'), 2, (again) => {
          assert.deepEqual(bodies(again), ['k1', 'k2']);
          ctx.ch.nackAll(false);
          nothingBack(t, ctx.ch, n('q'), () => t.done());
        });
      });
    });
  });

  s('reject with requeue puts it back redelivered; reject without requeue drops it', (t) => {
    sendToQueue(ctx, n('q'), 'j1');
    getMany(t, ctx.ch, n('q'), 1, ([msg]) => {
      ctx.ch.reject(msg);
      getMany(t, ctx.ch, n('q'), 1, ([again]) => {
        assert.equal(again.content.toString(), 'j1');
        assert.equal(again.fields.redelivered, true);
        ctx.ch.reject(again, false);
        nothingBack(t, ctx.ch, n('q'), () => t.done());
      });
    });
  });

  // ---- prefetch

  s('prefetch per consumer: at most 2 unacknowledged, an ack lets one more through', (t) => {
    openChannel(
      ctx.conn,
      kind,
      t.ok((pch) => {
        pch.prefetch(
          2,
          false,
          t.ok((ok) => {
            assert.deepEqual(ok, {});
            for (let i = 0; i < 5; i++) sendToQueue(ctx, n('q'), `p${i}`);
            const got = [];
            pch.consume(
              n('q'),
              (msg) => got.push(msg),
              {},
              t.ok(() => {
                t.later(SETTLE_MS, () => {
                  assert.deepEqual(bodies(got), ['p0', 'p1'], 'two delivered');
                  pch.ack(got[0]);
                  t.later(SETTLE_MS, () => {
                    assert.deepEqual(bodies(got), ['p0', 'p1', 'p2'], 'one more after the ack');
                    pch.close(
                      t.ok(() => {
                        ctx.ch.purgeQueue(
                          n('q'),
                          t.ok((purged) => {
                            assert.equal(purged.messageCount, 4, 'the unacknowledged came back on close');
                            t.done();
                          }),
                        );
                      }),
                    );
                  });
                });
              }),
            );
          }),
        );
      }),
    );
  });

  s('prefetch global: two consumers share a limit of 3', (t) => {
    openChannel(
      ctx.conn,
      kind,
      t.ok((pch) => {
        pch.prefetch(
          3,
          true,
          t.ok(() => {
            for (let i = 0; i < 8; i++) sendToQueue(ctx, n('q'), `g${i}`);
            const got = [];
            const onMessage = (msg) => got.push(msg);
            pch.consume(
              n('q'),
              onMessage,
              {},
              t.ok(() => {
                pch.consume(
                  n('q'),
                  onMessage,
                  {},
                  t.ok(() => {
                    t.later(SETTLE_MS, () => {
                      assert.equal(got.length, 3, 'three delivered over both consumers');
                      pch.ack(got[0]);
                      t.later(SETTLE_MS, () => {
                        assert.equal(got.length, 4, 'one more after the ack');
                        pch.close(
                          t.ok(() => {
                            ctx.ch.purgeQueue(
                              n('q'),
                              t.ok((purged) => {
                                assert.equal(purged.messageCount, 7);
                                t.done();
                              }),
                            );
                          }),
                        );
                      });
                    });
                  }),
                );
              }),
            );
          }),
        );
      }),
    );
  });

  // ---- confirms

  if (kind === 'confirm') {
    s('publish callbacks and waitForConfirms: every publish confirmed', (t) => {
      let callbacks = 0;
      for (let i = 0; i < 10; i++) {
        ctx.ch.publish(
          '',
          n('q'),
          Buffer.from(`w${i}`),
          { persistent: true },
          t.guard((err) => {
            assert.ok(!err, `publish ${i} nacked`);
            callbacks++;
          }),
        );
      }
      ctx.ch.publish(
        'amq.direct',
        'nobody-bound',
        Buffer.from('unrouted'),
        {},
        t.guard((err) => {
          assert.ok(!err, 'an unrouted publish is confirmed');
          callbacks++;
        }),
      );
      ctx.ch.waitForConfirms(
        t.guard((err) => {
          assert.ok(!err, `waitForConfirms: ${err}`);
          assert.equal(callbacks, 11, 'every publish callback ran');
          ctx.ch.purgeQueue(
            n('q'),
            t.ok((ok) => {
              assert.equal(ok.messageCount, 10);
              confirmed(ctx, t, () => t.done());
            }),
          );
        }),
      );
    });
  }

  // ---- cleanup and close

  s('deleteQueue answers the messages deleted', (t) => {
    sendToQueue(ctx, n('q'), 'left behind');
    ctx.ch.deleteQueue(
      n('q'),
      { ifUnused: true },
      t.ok((ok) => {
        assert.deepEqual(ok, { messageCount: 1 });
        let remaining = 3;
        for (const q of [n('props'), n('cc'), n('bcc')]) {
          ctx.ch.deleteQueue(
            q,
            {},
            t.ok((deleted) => {
              assert.equal(deleted.messageCount, 0, q);
              if (--remaining === 0) t.done();
            }),
          );
        }
      }),
    );
  });

  s('channel.close', (t) => {
    let closeEvent = false;
    ctx.ch.once('close', () => {
      closeEvent = true;
    });
    confirmed(ctx, t, () => {
      ctx.ch.close(
        t.ok(() => {
          waitUntil(
            t,
            () => closeEvent,
            () => {
              assert.equal(ctx.ch.errors.length, 0, 'no error events on this channel');
              t.done();
            },
          );
        }),
      );
    });
  });
}

channelSteps('channel');
channelSteps('confirm');

step('connection.close: the connection closes cleanly', (t) => {
  mainConnection.once(
    'close',
    t.guard((err) => {
      assert.equal(err, undefined, "'close' event without an error");
      t.done();
    }),
  );
  mainConnection.close(
    t.guard((err) => {
      assert.ok(!err, `close callback error: ${err}`);
    }),
  );
});

runStep(0);
