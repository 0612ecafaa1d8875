import Foundation

extension ProviderConfiguration.Mail {
    /// The transport these settings describe; a URL or address that cannot work is a
    /// ``MailError`` now, at start, not at the first message.
    func makeTransport() throws -> any MailTransport {
        guard MailMessage.isPlainAddress(from) else {
            throw MailError.invalidConfiguration("the sender address \(from) is not a plain e-mail address")
        }
        switch transport {
        case .smtp(let url, let password, let trustedCertificatesFile):
            return SMTPTransport(settings: try SMTPTransport.Settings(url: url, password: password, trustedCertificatesFile: trustedCertificatesFile))
        case .sendmail(let path):
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw MailError.invalidConfiguration("\(path) is not an executable sendmail")
            }
            return SendmailTransport(path: path)
        }
    }
}
