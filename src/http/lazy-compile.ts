// Schemas compiled on first use instead of at start-up. Compiling every route's validators (Ajv)
// and response serializers (fast-json-stringify) took most of the server's start (about 1 s of
// CPU on an idle machine, several under load) and their code stayed in memory for routes an
// instance may never serve. Each route now pays its own compile on its first request (a few ms).
import { SerializerSelector } from "@fastify/fast-json-stringify-compiler";

/** What fastify calls to validate a request part: Ajv's function, or this stand-in for it. */
interface Validate {
  // biome-ignore lint/suspicious/noExplicitAny: Ajv's context type, passed through untouched
  (data: unknown, context?: any): unknown;
  errors?: unknown;
  schemaEnv?: unknown;
}

/** A validator that compiles itself on its first call and then behaves exactly as `compile()`'s. */
export function lazyValidator<V extends Validate>(compile: () => V): V {
  let compiled: V | undefined;
  const validate: Validate = (data, context) => {
    compiled ??= compile();
    const valid = compiled(data, context);
    // fastify reads the errors from the function it was given (fastify/lib/validation.js).
    validate.errors = compiled.errors;
    return valid;
  };
  // fastify passes {parentData, parentDataProperty} only to functions that carry Ajv's schemaEnv;
  // Ajv needs them to replace a root value (defaults, coercion of a query string).
  validate.schemaEnv = true;
  return validate as V;
}

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type SerializerCompiler = ReturnType<SerializerFactory>;

/** fastify's own serializer factory (fast-json-stringify), each serializer built on first use. */
export function buildLazySerializer(...factoryArgs: Parameters<SerializerFactory>): SerializerCompiler {
  const compileNow = SerializerSelector()(...factoryArgs);
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => {
      serialize ??= compileNow(route) as (data: unknown) => string;
      return serialize(data);
    };
  };
}
