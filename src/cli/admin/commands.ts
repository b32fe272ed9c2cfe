// Every `docgen admin` command group. To add a group: write `<group>-commands.ts` exporting a
// Command[] (see command.ts), then add it here; the usage text, help and dispatch follow. A
// group that needs a new admin service adds it to ADMIN_SERVICES in admin-client.ts.
import { assetCommands } from './asset-commands.ts';
import { certificateCommands } from './certificate-commands.ts';
import type { Command } from './command.ts';
import { deliveryCommands } from './delivery-commands.ts';
import { generationCommands } from './generation-commands.ts';
import { keyCommands } from './key-commands.ts';
import { templateCommands } from './template-commands.ts';
import { userCommands } from './user-commands.ts';
import { webhookCommands } from './webhook-commands.ts';
import { workspaceCommands } from './workspace-commands.ts';

export const COMMANDS: Command[] = [
  ...workspaceCommands,
  ...keyCommands,
  ...templateCommands,
  ...webhookCommands,
  ...deliveryCommands,
  ...generationCommands,
  ...userCommands,
  ...assetCommands,
  ...certificateCommands,
];
