import { ApiLeafId, ApiLeafIdParam, LEAF_ID_SCHEMA } from './leaf-id.openapi';

/** @nestjs/swagger's metadata keys (its dist/constants, not an exported path); the whole document: test/http-ids.e2e-spec.ts. */
const DECORATORS = {
  API_MODEL_PROPERTIES: 'swagger/apiModelProperties',
  API_PARAMETERS: 'swagger/apiParameters',
};

class OrderDto {
  @ApiLeafId()
  id!: string;

  @ApiLeafId({ isArray: true, required: false, description: 'Line IDs' })
  lines?: string[];
}

class OrdersController {
  @ApiLeafIdParam('id')
  find(): void {}
}

describe('ApiLeafId / ApiLeafIdParam', () => {
  it('describe an ID property as a decimal string (single and array)', () => {
    const read = (key: string) =>
      Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, OrderDto.prototype, key) as Record<
        string,
        unknown
      >;
    expect(read('id')).toMatchObject({
      type: 'string',
      pattern: LEAF_ID_SCHEMA.pattern,
      maxLength: 19,
      required: true,
    });
    expect(read('lines')).toMatchObject({
      type: 'array',
      required: false,
      items: expect.objectContaining({ type: 'string', description: 'Line IDs' }),
    });
  });

  it('describe an ID path parameter', () => {
    const params = Reflect.getMetadata(
      DECORATORS.API_PARAMETERS,
      OrdersController.prototype.find,
    ) as Array<Record<string, unknown>>;
    expect(params).toEqual([
      expect.objectContaining({
        name: 'id',
        in: 'path',
        schema: expect.objectContaining({ type: 'string', pattern: LEAF_ID_SCHEMA.pattern }),
      }),
    ]);
  });
});
