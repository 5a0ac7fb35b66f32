/**
 * `nestjs-leaf/numbers`: business numbers (`ORD-20261204-000123`) — `BusinessNumberService`,
 * which `LeafModule` provides with segment or sequence mode, and the types of its formats. A format's
 * counter restarts each day, month or year of the database's clock (docs/design.md, "Business
 * numbers"); its errors are in `nestjs-leaf/errors`.
 */
export {
  BusinessNumberService,
  type DecodedNumber,
  type NewNumberFormat,
  type NumberFormat,
  type NumberFormatUpdate,
  type NumberMode,
} from './nest/numbers/business-number.service';
export {
  NUMBER_DATE_PATTERNS,
  NUMBER_RESETS,
  type NumberDatePattern,
  type NumberReset,
} from './core/numbers/number-format';
