package org.rds4j.samples;

import org.rds4j.Setting;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The one converter of every size option of the {@code rds} commands, parsed as the library's size settings are
 * ({@link Setting#parseSize}): bytes with an optional {@code k}, {@code m} or {@code g}, in any case, each a
 * power of 1024 ({@code 64k} is 65536 bytes, {@code 1m} 1048576). Each command checks its own range.
 */
public final class SizeConverter implements ITypeConverter<Integer>
{
    @Override
    public Integer convert(final String value)
    {
        try
        {
            return Setting.parseSize(value.trim());
        }
        catch (final IllegalArgumentException e)
        {
            throw new TypeConversionException("'" + value + "' is not a size: expected bytes with an optional k, m or g "
                + "(powers of 1024: 64k, 1m)");
        }
    }
}
