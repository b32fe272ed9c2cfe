// docgen drives the system Chromium (Debian package); puppeteer must never download a browser.
module.exports = {
  skipDownload: true,
  executablePath: process.env.DOCGEN_CHROMIUM_PATH || '/usr/bin/chromium',
};
