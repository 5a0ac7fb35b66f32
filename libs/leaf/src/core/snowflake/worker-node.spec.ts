import { WorkerStateCorruptError } from '../errors/worker-state-corrupt.error';
import {
  decodeWorkerNodeData,
  encodeWorkerNodeData,
  parseWorkerNodeName,
  workerNodeParent,
  workerNodesOf,
} from './worker-node';

describe('worker nodes', () => {
  it("use Leaf's path", () => {
    expect(workerNodeParent('leaf')).toBe('/snowflake/leaf/forever');
  });

  it('parse the sequence after the last "-", so host names with "-" work', () => {
    expect(parseWorkerNodeName('10.0.0.8:8080-0000000007')).toEqual({
      child: '10.0.0.8:8080-0000000007',
      identity: '10.0.0.8:8080',
      sequence: 7,
    });
    expect(parseWorkerNodeName('id-gen-2.svc:80-0000001023')).toMatchObject({
      identity: 'id-gen-2.svc:80',
      sequence: 1023,
    });
    expect(parseWorkerNodeName('no-sequence')).toBeNull();
    expect(parseWorkerNodeName('-0000000001')).toBeNull();
    expect(parseWorkerNodeName('x:1-123')).toBeNull();
  });

  it('select the nodes of one identity, lowest first', () => {
    const children = [
      'a:1-0000000005',
      'b:1-0000000001',
      'a:1-0000000002',
      'a:10-0000000003',
      'junk',
    ];
    expect(workerNodesOf(children, 'a:1').map((node) => node.sequence)).toEqual([2, 5]);
  });

  it('round-trip their data', () => {
    const data = { ip: '10.0.0.8', port: 8080, timestamp: 1, reservedUntil: 2 };
    expect(decodeWorkerNodeData('/p', encodeWorkerNodeData(data))).toEqual(data);
  });

  it("read the Java Leaf's data (port as a string, no reservedUntil)", () => {
    const raw = Buffer.from('{"ip":"10.0.0.8","port":"8080","timestamp":1700000000000}');
    expect(decodeWorkerNodeData('/p', raw)).toEqual({
      ip: '10.0.0.8',
      port: 8080,
      timestamp: 1_700_000_000_000,
    });
  });

  it.each([
    '',
    'not json',
    '[]',
    '{"ip":"a","port":1}',
    '{"ip":"a","port":1,"timestamp":1,"reservedUntil":"x"}',
  ])('refuse unusable data %j', (text) => {
    expect(() => decodeWorkerNodeData('/p', Buffer.from(text))).toThrow(WorkerStateCorruptError);
  });
});
