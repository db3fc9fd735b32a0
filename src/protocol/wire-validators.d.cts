interface Validator {
  (data: unknown): boolean;
  errors?: Array<{ instancePath: string; message?: string }> | null;
}
export declare const validateRequest: Validator;
export declare const validateReply: Validator;
