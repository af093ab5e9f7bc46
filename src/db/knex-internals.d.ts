/** knex's own factory of a knex instance around a client (what its transactions use). */
declare module 'knex/lib/knex-builder/make-knex' {
  import type { Knex } from 'knex';
  function makeKnex(client: Knex.Client): Knex;
  export = makeKnex;
}
