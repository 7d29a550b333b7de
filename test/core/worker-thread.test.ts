// TurnBatch (src/core/shared/worker-thread.ts): what the directory worker and the EAP TLS pool send
// each other in one event-loop turn leaves as one message at the turn's end, with every buffer of
// the turn transferred, not copied; the next turn starts a new batch.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { MessageChannel } from "node:worker_threads";
import { TurnBatch } from "../../src/core/shared/worker-thread.ts";

test("a turn's messages go as one, with their buffers transferred; the next turn starts another", async () => {
  const { port1, port2 } = new MessageChannel();
  type Message = [string, number, Uint8Array?];
  const received: Message[][] = [];
  port2.on("message", (batch: Message[]) => received.push(batch));
  const batch = new TurnBatch<Message>((messages, transfer) => port1.postMessage(messages, transfer));
  const octets = [new Uint8Array([1, 2]), new Uint8Array([3])];
  batch.push(["search", 1, octets[0]!], [octets[0]!.buffer]);
  batch.push(["bind", 2]);
  batch.push(["search", 3, octets[1]!], [octets[1]!.buffer]);
  assert.equal(received.length, 0, "nothing leaves before the turn ends");
  await nextTurn();
  // Moved to the other side: this side's views are empty now.
  assert.deepEqual(
    octets.map((o) => o.byteLength),
    [0, 0],
  );
  batch.push(["bind", 4]);
  await nextTurn();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(received.length, 2);
  assert.deepEqual(
    received[0]!.map((m) => m[1]),
    [1, 2, 3],
  );
  assert.deepEqual([...received[0]![0]![2]!], [1, 2]);
  assert.deepEqual(received[1], [["bind", 4]]);
  port1.close();
});
