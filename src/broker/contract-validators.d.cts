import type { ErrorObject } from 'ajv';

export interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}
export declare const runInput: Validator;
export declare const runOutput: Validator;
export declare const panesInput: Validator;
export declare const panesOutput: Validator;
/** sha256 of JSON.stringify of the four schemas, in this order, that the code was generated from. */
export declare const digest: string;
