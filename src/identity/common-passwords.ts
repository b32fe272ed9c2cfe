// A small list of passwords (12+ characters, lower case) that appear near the top of every
// leaked-password list. Shorter ones are refused by length already. Not exhaustive: it stops
// the obvious guesses that online guessing (rate limited) would try first.
export const COMMON_PASSWORDS: ReadonlySet<string> = new Set([
  '123456789012', '1234567890123', '12345678901234', '123456789123', '1234567891011', '111111111111', '000000000000',
  '123123123123', '121212121212', '987654321098', '147258369147', '123qweasdzxc', '1q2w3e4r5t6y', '1qaz2wsx3edc',
  '1q2w3e4r5t6y7u', 'qwertyuiop12', 'qwertyuiop123', 'qwertyuiopasdfgh', 'qwerty123456', 'qwerty12345678',
  'asdfghjkl123', 'zxcvbnm12345', 'qazwsxedcrfv', 'qwertyqwerty', 'asdfasdfasdf', 'password1234', 'password12345',
  'password123456', 'password1234567', 'passwordpassword', 'password123!', 'password2024', 'password2025',
  'password2026', 'passw0rd1234', 'p@ssw0rd1234', 'p@ssword1234', 'mypassword123', 'mypassword1234',
  'changeme1234', 'changeme123!', 'letmein12345', 'letmein123456', 'welcome12345', 'welcome123456', 'welcome2024!',
  'welcome2025!', 'welcome2026!', 'iloveyou1234', 'iloveyou12345', 'iloveyouiloveyou', 'administrator',
  'administrator1', 'admin1234567', 'admin123456789', 'adminadminadmin', 'superman1234', 'batman123456',
  'football1234', 'baseball1234', 'basketball12', 'basketball123', 'liverpool123', 'chelsea12345', 'princess1234',
  'sunshine1234', 'starwars1234', 'dragon123456', 'monkey123456', 'shadow123456', 'master123456', 'michael12345',
  'jennifer1234', 'trustno1trustno1', 'whatever1234', 'computer1234', 'internet1234', 'samsung12345',
  'abcdefghijkl', 'abcd12345678', 'abc123456789', 'abcabcabcabc', 'aaaaaaaaaaaa', 'secret123456', 'secretpassword',
  'correcthorsebatterystaple', 'thequickbrownfox', 'letmeinplease', 'qwertyuiopasdfghjkl', 'summer2024!!',
  'winter2024!!', 'spring2025!!', 'autumn2025!!', 'summer123456', 'docgen123456', 'docgendocgen',
]);
