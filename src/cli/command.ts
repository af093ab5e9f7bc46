/**
 * What every command group gets from runCli: the global options, styled output and the exit
 * status, so each group's file registers its commands without touching process state.
 */
import type { Command, Option } from 'commander';
import type { GlobalOptions } from './api';
import type { Style } from './output';

export type Format = 'table' | 'json';

export interface CommandHelpers {
  globals(cmd: Command): GlobalOptions & { color: boolean };
  styles(cmd: Command): { out: Style; err: Style };
  /** A fresh `--format table|json` option (an Option belongs to one command). */
  formatOption(): Option;
  print(s: string): void;
  /** A progress line on stderr, only when it is a terminal. */
  progress(s: string): void;
  setExitCode(code: number): void;
}
