// the slug of a statement file's name: one rule with the directory's check of its rows
export { slugOf } from '../../statement-file-names';
