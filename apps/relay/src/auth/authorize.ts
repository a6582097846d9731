/** Whether `user` may join `room`: only rooms named `<user>/<something>`. */
export function mayJoin(user: string, room: string): boolean {
  return room.length > user.length + 1 && room.startsWith(user + '/')
}
